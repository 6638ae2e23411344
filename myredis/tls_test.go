package myredis_test

// TLS tests: a CA, a server and a client certificate made here with crypto/x509;
// go-redis connects with rediss:// and redis-cli with --tls (skipped when
// redis-cli is absent).

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	mathbig "math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// testPKI is a CA and certificates it signed, written as PEM files in dir.
type testPKI struct {
	dir                             string
	caFile, certFile, keyFile       string // the server's
	clientCert, clientKey           string
	pool                            *x509.CertPool
	clientPair                      tls.Certificate
	otherClientCert, otherClientKey string // signed by another CA
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	caKey, caCert, caDER := makeCA(t, "MyRedis test CA")
	p.caFile = p.writePEM(t, "ca.crt", "CERTIFICATE", caDER)
	p.pool = x509.NewCertPool()
	p.pool.AddCert(caCert)
	p.certFile, p.keyFile = p.issue(t, "server", caCert, caKey, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = p.issue(t, "client", caCert, caKey, x509.ExtKeyUsageClientAuth)
	pair, err := tls.LoadX509KeyPair(p.clientCert, p.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	p.clientPair = pair
	otherKey, otherCert, _ := makeCA(t, "another CA")
	p.otherClientCert, p.otherClientKey = p.issue(t, "stranger", otherCert, otherKey, x509.ExtKeyUsageClientAuth)
	return p
}

func makeCA(t *testing.T, name string) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: mathbig.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return key, cert, der
}

// issue makes a certificate for 127.0.0.1/localhost signed by the CA.
func (p *testPKI) issue(t *testing.T, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: mathbig.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return p.writePEM(t, name+".crt", "CERTIFICATE", der), p.writePEM(t, name+".key", "PRIVATE KEY", keyDER)
}

func (p *testPKI) writePEM(t *testing.T, name, typ string, der []byte) string {
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startTLS starts MyRedis with a TLS port (and no plain one) and returns the
// TLS address.
func startTLS(t *testing.T, p *testPKI, authClients string) (*myredis.Server, string) {
	t.Helper()
	port := redistest.FreePort(t)
	cfg, err := myredis.ParseArgs([]string{"--port", "0", "--tls-port", itoa(port),
		"--tls-cert-file", p.certFile, "--tls-key-file", p.keyFile, "--tls-ca-cert-file", p.caFile,
		"--tls-auth-clients", authClients})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := myredis.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	t.Cleanup(func() { srv.Close(); <-served })
	deadline := time.Now().Add(5 * time.Second)
	for srv.TLSAddr() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if srv.TLSAddr() == nil {
		t.Fatal("no TLS listener")
	}
	return srv, srv.TLSAddr().String()
}

func itoa(n int) string { return mathbig.NewInt(int64(n)).String() }

func TestTLSGoRedisConnects(t *testing.T) {
	p := newTestPKI(t)
	_, addr := startTLS(t, p, "yes")
	opt, err := redis.ParseURL("rediss://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	opt.TLSConfig.RootCAs = p.pool
	opt.TLSConfig.Certificates = []tls.Certificate{p.clientPair}
	opt.TLSConfig.ServerName = "127.0.0.1"
	c := redis.NewClient(opt)
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "over tls", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "over tls" {
		t.Fatalf("GET over TLS: %q %v", v, err)
	}
	list, err := c.ClientList(ctx).Result()
	if err != nil || !strings.Contains(list, "fd=") || strings.Contains(list, "fd=-1") {
		t.Fatalf("CLIENT LIST over TLS shows no socket: %q %v", list, err)
	}
}

func TestTLSClientCertificateRequired(t *testing.T) {
	p := newTestPKI(t)
	_, addr := startTLS(t, p, "yes")
	try := func(certs []tls.Certificate) error { return tlsPing(t, addr, p.pool, certs) }
	if err := try(nil); err == nil {
		t.Fatal("tls-auth-clients yes accepted a client without a certificate")
	}
	stranger, err := tls.LoadX509KeyPair(p.otherClientCert, p.otherClientKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := try([]tls.Certificate{stranger}); err == nil {
		t.Fatal("a certificate of another CA was accepted")
	}
	if err := try([]tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("a certificate of the CA was refused: %v", err)
	}
}

func TestTLSAuthClientsOptionalAndConfig(t *testing.T) {
	p := newTestPKI(t)
	_, addr := startTLS(t, p, "optional")
	if err := tlsPing(t, addr, p.pool, nil); err != nil {
		t.Fatalf("optional: a client without a certificate: %v", err)
	}
	if err := tlsPing(t, addr, p.pool, []tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("optional: a client with a certificate: %v", err)
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: p.pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	c := redistest.Wrap(t, conn)
	mustDo(t, c, redistest.Array(redistest.Bulk("tls-auth-clients"), redistest.Bulk("optional")), "CONFIG", "GET", "tls-auth-clients")
	mustDo(t, c, "-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs.\r\n",
		"CONFIG", "SET", "tls-cert-file", filepath.Join(p.dir, "missing.crt"))
	mustDo(t, c, "-ERR CONFIG SET failed (possibly related to argument 'tls-auth-clients') - argument(s) must be one of the following: no, yes, optional\r\n",
		"CONFIG", "SET", "tls-auth-clients", "maybe")
	mustDo(t, c, ok, "CONFIG", "SET", "tls-auth-clients", "yes")
	if err := tlsPing(t, addr, p.pool, nil); err == nil {
		t.Fatal("after CONFIG SET tls-auth-clients yes, a client without a certificate got in")
	}
	if err := tlsPing(t, addr, p.pool, []tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("after CONFIG SET tls-auth-clients yes, a client with a certificate: %v", err)
	}
}

// tlsPing connects over TLS and sends PING: nil when PONG comes back. With TLS
// 1.3 a refused client certificate shows at the first read, not at the handshake.
func tlsPing(t *testing.T, addr string, pool *x509.CertPool, certs []tls.Certificate) error {
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", Certificates: certs})
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 16)
	n, err := conn.Read(buf)
	if err != nil {
		return err
	}
	if string(buf[:n]) != "+PONG\r\n" {
		t.Fatalf("PING over TLS: %q", buf[:n])
	}
	return nil
}

func TestTLSRedisCli(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed")
	}
	p := newTestPKI(t)
	_, addr := startTLS(t, p, "yes")
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command(cli, "-h", host, "-p", port, "--tls", "--cacert", p.caFile,
		"--cert", p.clientCert, "--key", p.clientKey, "SET", "via", "redis-cli").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "OK" {
		t.Fatalf("redis-cli --tls: %s %v", out, err)
	}
	out, err = exec.Command(cli, "-h", host, "-p", port, "--tls", "--cacert", p.caFile,
		"--cert", p.clientCert, "--key", p.clientKey, "GET", "via").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "redis-cli" {
		t.Fatalf("redis-cli --tls GET: %s %v", out, err)
	}
}
