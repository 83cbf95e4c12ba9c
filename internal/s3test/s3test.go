// Package s3test runs a real S3 store for the tests: SeaweedFS's `weed server -s3`, built
// from a nested module pinned in ./weed (so sno-iso never depends on SeaweedFS), listening on
// 127.0.0.1 only, over TLS with a CA the test makes, with static keys: one read-write
// identity, one read-only, and keys the store does not know. The binary is built once per
// test process and cached across runs; a store is started per test and removed with it.
package s3test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Region is the region the store's clients sign for. SeaweedFS serves one region whatever
// the name.
const Region = "us-east-1"

// Keys is a static access key pair.
type Keys struct {
	AccessKeyID     string
	SecretAccessKey string
}

// Store is a running SeaweedFS with its S3 gateway.
type Store struct {
	// Endpoint is the S3 gateway's URL, https://127.0.0.1:PORT.
	Endpoint string
	// CAFile is the PEM file of the CA that signed the gateway's certificate; CAPool holds it.
	CAFile string
	CAPool *x509.CertPool
	// ReadWrite may create buckets and write objects; ReadOnly may only read and list; Wrong
	// is a well-formed key pair the store does not know.
	ReadWrite, ReadOnly, Wrong Keys
	// Session are read-only identities for a fake STS to hand out as temporary credentials
	// (see STS).
	Session [2]Keys

	dir    string
	bin    string
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
	log    *logBuffer
	// grpcPorts name the Unix sockets weed makes in /tmp whatever its flags say.
	grpcPorts []int
}

// Start builds (once) and starts a store for t, waits until it stores objects, and stops it
// and removes its files when t ends, also when t fails.
func Start(t testing.TB) *Store {
	t.Helper()
	s, err := Launch(Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("SeaweedFS log (tail):\n%s", tail(s.log.String(), 40))
		}
		s.Remove()
	})
	return s
}

// Launch starts a store from the weed binary bin (see Build) and waits until it stores
// objects: Start's work, for programs that are not tests (the benchmarks). The caller stops
// it and removes its files with Stop and Remove.
func Launch(bin string) (*Store, error) {
	// Unix socket paths are short: t.TempDir's names grow with the test's name.
	dir, err := os.MkdirTemp("", "s3test-")
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, bin: bin, log: &logBuffer{}, ReadWrite: newKeys("RW"), ReadOnly: newKeys("RO"), Wrong: newKeys("NO"),
		Session: [2]Keys{newKeys("S0"), newKeys("S1")}}
	if err := s.writeConfig(); err != nil {
		s.Remove()
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		err := s.pickPortsAndStart()
		if err == nil {
			return s, nil
		}
		if attempt == 4 || !strings.Contains(s.log.String(), "address already in use") {
			s.Remove()
			return nil, fmt.Errorf("SeaweedFS did not start: %v\n%s", err, tail(s.log.String(), 40))
		}
	}
}

// Remove deletes the files of a stopped store, and the sockets weed made in /tmp.
func (s *Store) Remove() {
	os.RemoveAll(s.dir)
	for _, port := range s.grpcPorts {
		socks, _ := filepath.Glob(fmt.Sprintf("/tmp/seaweedfs-*-grpc-%d.sock", port))
		for _, sock := range socks {
			os.Remove(sock)
		}
	}
}

func newKeys(role string) Keys {
	id, secret := make([]byte, 8), make([]byte, 20)
	rand.Read(id)
	rand.Read(secret)
	return Keys{AccessKeyID: "S3TEST" + role + strings.ToUpper(hex.EncodeToString(id)), SecretAccessKey: hex.EncodeToString(secret)}
}

// writeConfig writes the CA, the gateway's certificate and the identities.
func (s *Store) writeConfig() error {
	caPEM, certPEM, keyPEM, err := newPKI()
	if err != nil {
		return err
	}
	s.CAFile = filepath.Join(s.dir, "ca.crt")
	s.CAPool = x509.NewCertPool()
	s.CAPool.AppendCertsFromPEM(caPEM)
	type cred struct {
		AccessKey string `json:"accessKey"`
		SecretKey string `json:"secretKey"`
	}
	type identity struct {
		Name        string   `json:"name"`
		Credentials []cred   `json:"credentials"`
		Actions     []string `json:"actions"`
	}
	ids, err := json.Marshal(map[string][]identity{"identities": {
		{"readwrite", []cred{{s.ReadWrite.AccessKeyID, s.ReadWrite.SecretAccessKey}}, []string{"Admin", "Read", "Write", "List", "Tagging"}},
		{"readonly", []cred{{s.ReadOnly.AccessKeyID, s.ReadOnly.SecretAccessKey}}, []string{"Read", "List"}},
		{"session0", []cred{{s.Session[0].AccessKeyID, s.Session[0].SecretAccessKey}}, []string{"Read", "List"}},
		{"session1", []cred{{s.Session[1].AccessKeyID, s.Session[1].SecretAccessKey}}, []string{"Read", "List"}},
	}})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"ca.crt": caPEM, "tls.crt": certPEM, "tls.key": keyPEM, "identities.json": ids} {
		if err := os.WriteFile(filepath.Join(s.dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return os.Mkdir(filepath.Join(s.dir, "data"), 0o700)
}

// newPKI makes a CA and a certificate for 127.0.0.1 and localhost signed by it.
func newPKI() (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sno-iso s3test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// pickPortsAndStart gives every listener of the store a free 127.0.0.1 port and starts it.
func (s *Store) pickPortsAndStart() error {
	ports, err := freePorts(8)
	if err != nil {
		return err
	}
	p := func(i int) string { return fmt.Sprint(ports[i]) }
	s.Endpoint = "https://127.0.0.1:" + p(6)
	s.grpcPorts = []int{ports[1], ports[3], ports[5], ports[7]}
	s.args = []string{"server",
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=" + filepath.Join(s.dir, "data"),
		"-master.port=" + p(0), "-master.port.grpc=" + p(1), "-master.telemetry=false",
		"-master.electionTimeout=1s", // one master: the default 10s only delays its own election
		"-master.volumeSizeLimitMB=256", "-volume.max=64",
		"-volume.port=" + p(2), "-volume.port.grpc=" + p(3),
		"-filer", "-filer.port=" + p(4), "-filer.port.grpc=" + p(5), "-filer.localSocket=" + filepath.Join(s.dir, "filer.sock"),
		"-s3", "-s3.port=" + p(6), "-s3.port.grpc=" + p(7), "-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.localSocket=" + filepath.Join(s.dir, "s3.sock"),
		"-s3.cert.file=" + filepath.Join(s.dir, "tls.crt"), "-s3.key.file=" + filepath.Join(s.dir, "tls.key"),
		"-s3.config=" + filepath.Join(s.dir, "identities.json"),
	}
	return s.start()
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// start runs the store in a process group of its own and waits until it stores an object.
func (s *Store) start() error {
	s.log.Reset()
	s.cmd = exec.Command(s.bin, s.args...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	ownProcessGroup(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(s.cmd, s.exited)
	if err := s.waitReady(); err != nil {
		s.Stop()
		return err
	}
	return nil
}

// waitReady writes and deletes a probe object until the store takes it: the S3 port answers
// before the volume server has joined the master.
func (s *Store) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := s.client(s.ReadWrite)
	const probe = "s3test-ready"
	var last error
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("weed exited: %v", s.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("not ready after 90s: %v", last)
		case <-time.After(200 * time.Millisecond):
		}
		try, cancelTry := context.WithTimeout(ctx, 10*time.Second)
		last = s.probe(try, c, probe)
		cancelTry()
		if last == nil {
			return nil
		}
	}
}

func (s *Store) probe(ctx context.Context, c *s3.Client, bucket string) error {
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}); err != nil {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
			var owned *types.BucketAlreadyOwnedByYou
			if !errors.As(err, &owned) {
				return err
			}
		}
	}
	key := "probe"
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader("ready")}); err != nil {
		return err
	}
	_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key})
	return err
}

// Stop kills the store's processes, as an outage would, and keeps its data for Restart: what
// it acknowledged is in its files already. Stopping a stopped store does nothing.
func (s *Store) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	killGroup(s.cmd)
	<-s.exited
}

// Restart starts a stopped store again on the same ports with the same data and keys.
func (s *Store) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		t.Fatalf("SeaweedFS did not restart: %v\n%s", err, tail(s.log.String(), 40))
	}
}

// HTTPClient trusts the store's CA.
func (s *Store) HTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: s.CAPool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}
}

// Client is an S3 client of the store signing with keys, path-style.
func (s *Store) Client(keys Keys) *s3.Client { return s.client(keys) }

func (s *Store) client(keys Keys) *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(keys.AccessKeyID, keys.SecretAccessKey, ""),
		HTTPClient:   s.HTTPClient(),
	})
}

// CreateBucket makes a bucket with the read-write keys, with versioning when versioned.
func (s *Store) CreateBucket(t testing.TB, name string, versioned bool) {
	t.Helper()
	ctx := context.Background()
	c := s.client(s.ReadWrite)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	if versioned {
		_, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &name,
			VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
		if err != nil {
			t.Fatalf("enable versioning on %s: %v", name, err)
		}
	}
}

// Object is what PutObject stored.
type Object struct {
	ETag      string
	VersionID string // "" without versioning
}

// Put stores data at bucket/key with the read-write keys.
func (s *Store) Put(t testing.TB, bucket, key string, data []byte) Object {
	t.Helper()
	out, err := s.client(s.ReadWrite).PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: &bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		t.Fatalf("put s3://%s/%s: %v", bucket, key, err)
	}
	return Object{ETag: aws.ToString(out.ETag), VersionID: aws.ToString(out.VersionId)}
}

// Get reads bucket/key whole with keys.
func (s *Store) Get(t testing.TB, keys Keys, bucket, key string) []byte {
	t.Helper()
	out, err := s.client(keys).GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("get s3://%s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("get s3://%s/%s: %v", bucket, key, err)
	}
	return data
}

// Env is the environment that points the AWS SDK's default chain at the store with keys: the
// static keys, region, endpoint and CA bundle, with every other source of credentials or
// configuration switched off (no shared files, no profile, no instance metadata service, no
// container credentials), so a test never reaches beyond loopback.
func (s *Store) Env(keys Keys) []string {
	env := []string{
		"AWS_ACCESS_KEY_ID=" + keys.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + keys.SecretAccessKey,
		"AWS_REGION=" + Region,
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_CA_BUNDLE=" + s.CAFile,
	}
	return append(env, IsolatedEnv(s.dir)...)
}

// IsolatedEnv switches off every source of AWS configuration beyond what a test sets: shared
// files (pointed into dir, where none exist), profiles, session tokens, web identity,
// container credentials and the instance metadata service.
func IsolatedEnv(dir string) []string {
	return []string{
		"AWS_CONFIG_FILE=" + filepath.Join(dir, "no-aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "no-aws-credentials"),
		"AWS_PROFILE=", "AWS_DEFAULT_PROFILE=", "AWS_SESSION_TOKEN=",
		"AWS_WEB_IDENTITY_TOKEN_FILE=", "AWS_ROLE_ARN=", "AWS_ROLE_SESSION_NAME=", "AWS_ENDPOINT_URL_STS=",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI=", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI=", "AWS_CONTAINER_AUTHORIZATION_TOKEN=",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL=", "AWS_DEFAULT_REGION=",
	}
}

// Setenv sets Env(keys) in the test's own environment (t.Setenv: not for parallel tests).
func (s *Store) Setenv(t testing.TB, keys Keys) {
	t.Helper()
	for _, kv := range s.Env(keys) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// logBuffer keeps the last 256 KiB the store printed, safe for its writers and a reader.
type logBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - 256<<10; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *logBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WrongRegion starts an S3 endpoint on loopback that answers every request as AWS answers one
// signed for another region than the bucket's, as its S3 error documentation describes: 301
// PermanentRedirect naming the bucket's region in x-amz-bucket-region, and no Location. It
// returns the endpoint's URL and the number of requests answered so far.
func WrongRegion(t testing.TB, region string) (string, *atomic.Int64) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("X-Amz-Bucket-Region", region)
		w.WriteHeader(http.StatusMovedPermanently)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PermanentRedirect</Code>`+
			`<Message>The bucket you are attempting to access must be addressed using the specified endpoint.</Message></Error>`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &requests
}
