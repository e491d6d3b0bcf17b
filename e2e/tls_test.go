package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writePKI makes a cluster CA and one certificate (valid for 127.0.0.1, as client and server) signed by it.
func writePKI(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memcluster test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	nodeKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	nodeTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "memnode"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	nodeDER, err := x509.CreateCertificate(rand.Reader, nodeTmpl, caCert, &nodeKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(nodeKey)
	ca, cert, key = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "node.pem"), filepath.Join(dir, "node-key.pem")
	for path, block := range map[string]*pem.Block{ca: {Type: "CERTIFICATE", Bytes: caDER},
		cert: {Type: "CERTIFICATE", Bytes: nodeDER}, key: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca, cert, key
}

// TestTLSCluster: API over https, node-to-node mutual TLS on the Raft port and the internal calls, gossip
// encrypted. Writes entering at every node (so most are forwarded) succeed; plain HTTP and certificate-less
// internal calls are refused.
func TestTLSCluster(t *testing.T) {
	needProcesses(t)
	ca, cert, key := writePKI(t, t.TempDir())
	gkey := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	procs := []*proc{newProc(t, "n1"), newProc(t, "n2"), newProc(t, "n3")}
	for _, p := range procs {
		p.start("--bootstrap-expect", "3", "--join", procs[0].gossip, "--shards", "4",
			"--tls-cert", cert, "--tls-key", key, "--tls-client-ca", ca, "--gossip-key", gkey)
	}
	_, bin := binaries(t)
	ctl := func(addr string, args ...string) (string, string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--addr", "https://" + addr, "--cacert", ca}, args...)...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return out.String(), errb.String(), code
	}
	waitFor(t, 60*time.Second, "a healthy TLS cluster", func() bool {
		for _, p := range procs {
			if _, _, code := ctl(p.http, "cluster", "status", "--check"); code != 0 {
				return false
			}
		}
		return true
	})
	for i, p := range procs {
		for u := 0; u < 4; u++ {
			if _, errOut, code := ctl(p.http, "put", "--user", fmt.Sprintf("tess-%d", u), "over tls"); code != 0 {
				t.Fatalf("put via node %d: %s", i, errOut)
			}
		}
	}
	out, errOut, code := ctl(procs[2].http, "-o", "json", "search", "--user", "tess-1", "--min-score", "0", "tls")
	if code != 0 || strings.Count(out, `"id"`) != 3 {
		t.Fatalf("search over tls: exit %d %s %s", code, out, errOut)
	}
	// Plain HTTP to a TLS port fails; the internal API wants a node certificate.
	if resp, err := http.Get("http://" + procs[0].http + "/healthz"); err == nil && resp.StatusCode == 200 {
		t.Fatal("plain http accepted on a TLS port")
	}
	pool := x509.NewCertPool()
	pemBytes, _ := os.ReadFile(ca)
	pool.AppendCertsFromPEM(pemBytes)
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := noCert.Get("https://" + procs[0].http + "/internal/v1/node")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("internal API without a node certificate: %d, want 401", resp.StatusCode)
	}
}
