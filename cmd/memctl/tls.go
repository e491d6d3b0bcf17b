package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
)

// httpClient returns a client with the TLS settings of --cacert/--cert/--key, or nil when none is set.
func (g *globals) httpClient() (*http.Client, error) {
	if g.cacert == "" && g.cert == "" && g.key == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if g.cacert != "" {
		pem, err := os.ReadFile(g.cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert: no PEM certificate in %s", g.cacert)
		}
		conf.RootCAs = pool
	}
	if (g.cert == "") != (g.key == "") {
		return nil, fmt.Errorf("--cert and --key go together")
	}
	if g.cert != "" {
		c, err := tls.LoadX509KeyPair(g.cert, g.key)
		if err != nil {
			return nil, fmt.Errorf("--cert/--key: %w", err)
		}
		conf.Certificates = []tls.Certificate{c}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = conf
	return &http.Client{Transport: tr}, nil
}
