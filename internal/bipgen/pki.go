package bipgen

import (
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"math/big"
	"math/rand/v2"
	"sync"
	"time"
)

// The installer's PKI is many RSA-2048 key pairs and certificates. Their size and
// incompressibility is what matters for the embed area, not their cryptographic quality,
// and crypto/rsa.GenerateKey is deliberately not deterministic. So a few signing keys are
// real RSA keys built from primes searched deterministically in the seeded stream, and
// every other key pair is a PKCS#1 structure of the right sizes filled from the stream,
// with a certificate really signed by one of the real keys.

// entropy is the seeded byte stream everything random-looking comes from.
type entropy struct{ *rand.ChaCha8 }

// newEntropy returns the stream of a seed for one purpose: streams of different purposes
// are independent, so that one can be cached without shifting the others.
func newEntropy(seed uint64, purpose string) entropy {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	copy(s[8:], purpose)
	return entropy{rand.NewChaCha8(s)}
}

func (e entropy) bytes(n int) []byte {
	b := make([]byte, n)
	_, _ = e.Read(b) // ChaCha8.Read never fails
	return b
}

// integer returns a number of exactly bits bits (top bit set), odd when odd is set.
func (e entropy) integer(bits int, odd bool) *big.Int {
	b := e.bytes((bits + 7) / 8)
	b[0] |= 0x80
	if odd {
		b[len(b)-1] |= 1
	}
	return new(big.Int).SetBytes(b)
}

// prime finds a prime of bits bits whose two top bits are set, so that the product of
// two such primes has exactly 2*bits bits.
func (e entropy) prime(bits int) *big.Int {
	p := e.integer(bits, true)
	p.SetBit(p, bits-2, 1)
	two := big.NewInt(2)
	for !p.ProbablyPrime(20) {
		p.Add(p, two)
	}
	return p
}

// rsaKey builds a real RSA key of 2*primeBits bits from the stream.
func (e entropy) rsaKey(primeBits int) (*rsa.PrivateKey, error) {
	for {
		p, q := e.prime(primeBits), e.prime(primeBits)
		if p.Cmp(q) == 0 {
			continue
		}
		key := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: new(big.Int).Mul(p, q), E: 65537}, Primes: []*big.Int{p, q}}
		one := big.NewInt(1)
		phi := new(big.Int).Mul(new(big.Int).Sub(p, one), new(big.Int).Sub(q, one))
		key.D = new(big.Int).ModInverse(big.NewInt(65537), phi)
		if key.D == nil {
			continue // 65537 divides p-1 or q-1: rare, take the next primes
		}
		key.Precompute()
		if err := key.Validate(); err != nil {
			return nil, fmt.Errorf("deterministic RSA key: %w", err)
		}
		return key, nil
	}
}

// pkcs1Key is the ASN.1 shape of an RSA private key (RFC 8017, A.1.2).
type pkcs1Key struct {
	Version               int
	N                     *big.Int
	E                     int
	D, P, Q, DP, DQ, QInv *big.Int
}

// lookalikeKey is an RSA key pair of the given modulus size whose numbers come from the
// stream: a PEM private key of the real size, and a public key to certify.
func (e entropy) lookalikeKey(bits int) (keyPEM []byte, pub *rsa.PublicKey, err error) {
	k := pkcs1Key{
		N: e.integer(bits, true), E: 65537, D: e.integer(bits-1, false),
		P: e.integer(bits/2, true), Q: e.integer(bits/2, true),
		DP: e.integer(bits/2-1, false), DQ: e.integer(bits/2-1, false), QInv: e.integer(bits/2-1, false),
	}
	der, err := asn1.Marshal(k)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}), &rsa.PublicKey{N: k.N, E: k.E}, nil
}

// issuer is a real key and its certificate, which signs the others.
type issuer struct {
	key  *rsa.PrivateKey
	cert *x509.Certificate
	pem  []byte
}

// notBefore is fixed so that the same seed gives the same certificates.
var notBefore = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func (e entropy) certificate(name string, pub *rsa.PublicKey, ca bool, parent *issuer,
	signer *rsa.PrivateKey) ([]byte, *x509.Certificate, error) {
	template := &x509.Certificate{
		SerialNumber: new(big.Int).SetBytes(e.bytes(16)),
		Subject:      pkix.Name{CommonName: name, OrganizationalUnit: []string{"openshift"}},
		NotBefore:    notBefore,
		NotAfter:     notBefore.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	if ca {
		template.IsCA, template.BasicConstraintsValid = true, true
		template.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	} else {
		template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		template.DNSNames = []string{name + ".sno.example.com", "localhost"}
	}
	parentCert := template
	if parent != nil {
		parentCert, signer = parent.cert, parent.key
	}
	// PKCS#1 v1.5 signatures use no randomness, so the stream is only a formality here.
	der, err := x509.CreateCertificate(e, template, parentCert, pub, signer)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert, nil
}

// issuerNames are the real CAs; the first is the root CA.
var issuerNames = []string{"root-ca", "kube-apiserver-lb-signer", "kubelet-bootstrap-signer"}

// issuerCache keeps the real CAs of each seed: searching primes is most of the
// generation time, and tests generate the same seed in several spec versions.
var issuerCache struct {
	sync.Mutex
	bySeed map[uint64][]*issuer
}

// issuers returns the real CAs of a seed, from their own stream.
func issuers(seed uint64) ([]*issuer, error) {
	issuerCache.Lock()
	defer issuerCache.Unlock()
	if cached, ok := issuerCache.bySeed[seed]; ok {
		return cached, nil
	}
	e := newEntropy(seed, "issuers")
	var list []*issuer
	for _, name := range issuerNames {
		iss, err := e.newIssuer(name)
		if err != nil {
			return nil, err
		}
		list = append(list, iss)
	}
	if issuerCache.bySeed == nil {
		issuerCache.bySeed = map[uint64][]*issuer{}
	}
	issuerCache.bySeed[seed] = list
	return list, nil
}

// newIssuer makes a real, self-signed CA.
func (e entropy) newIssuer(name string) (*issuer, error) {
	key, err := e.rsaKey(1024)
	if err != nil {
		return nil, err
	}
	certPEM, cert, err := e.certificate(name, &key.PublicKey, true, nil, key)
	if err != nil {
		return nil, err
	}
	return &issuer{key: key, cert: cert, pem: certPEM}, nil
}

func (i *issuer) keyPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(i.key)})
}

// keyPair is a PEM private key and its certificate.
type keyPair struct {
	key, cert []byte
	public    *rsa.PublicKey
}

// newKeyPair makes a look-alike key of bits bits with a certificate signed by parent.
func (e entropy) newKeyPair(name string, bits int, ca bool, parent *issuer) (keyPair, error) {
	keyPEM, pub, err := e.lookalikeKey(bits)
	if err != nil {
		return keyPair{}, err
	}
	certPEM, _, err := e.certificate(name, pub, ca, parent, nil)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{key: keyPEM, cert: certPEM, public: pub}, nil
}

// sshEd25519 returns an authorized_keys line for an Ed25519 key derived from the stream.
func (e entropy) sshEd25519(comment string) string {
	pub := ed25519.NewKeyFromSeed(e.bytes(ed25519.SeedSize)).Public().(ed25519.PublicKey)
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(sshWire([]byte("ssh-ed25519"), pub)) + " " + comment
}

// sshRSA returns an authorized_keys line for an RSA public key.
func sshRSA(pub *rsa.PublicKey, comment string) string {
	e := big.NewInt(int64(pub.E)).Bytes()
	n := append([]byte{0}, pub.N.Bytes()...) // mpint: a leading zero keeps it positive
	return "ssh-rsa " + base64.StdEncoding.EncodeToString(sshWire([]byte("ssh-rsa"), e, n)) + " " + comment
}

// sshWire joins length-prefixed strings as in the SSH wire format (RFC 4251).
func sshWire(fields ...[]byte) []byte {
	var b []byte
	for _, f := range fields {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}
