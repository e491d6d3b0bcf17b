package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"os"
)

// tlsConfigs builds the node's TLS settings from --tls-cert, --tls-key and --tls-client-ca. One CA (the
// cluster's) verifies both directions: node-to-node traffic (Raft port, internal calls) is mutual TLS; API
// clients may present a certificate but need not (tokens authenticate them).
func tlsConfigs(c config) (api, node *tls.Config, err error) {
	if c.tlsCert == "" && c.tlsKey == "" && c.tlsClientCA == "" {
		return nil, nil, nil
	}
	if c.tlsCert == "" || c.tlsKey == "" || c.tlsClientCA == "" {
		return nil, nil, fmt.Errorf("TLS needs --tls-cert, --tls-key and --tls-client-ca (the cluster CA) together")
	}
	cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
	if err != nil {
		return nil, nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	pem, err := os.ReadFile(c.tlsClientCA)
	if err != nil {
		return nil, nil, fmt.Errorf("--tls-client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, fmt.Errorf("--tls-client-ca: no PEM certificate in %s", c.tlsClientCA)
	}
	api = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
		ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}
	node = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
		RootCAs: pool, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	return api, node, nil
}

// gossipKey decodes --gossip-key (base64 of 16, 24 or 32 bytes).
func gossipKey(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("--gossip-key: not base64: %w", err)
	}
	if n := len(k); n != 16 && n != 24 && n != 32 {
		return nil, fmt.Errorf("--gossip-key: %d bytes, want 16, 24 or 32", n)
	}
	return k, nil
}
