package main

// The container image is built from scratch and has no CA bundle, so without these roots
// every https origin, stream and BMC would fail its certificate check there. Go uses them only
// where the system offers none: SSL_CERT_FILE, SSL_CERT_DIR and a distribution's bundle still
// decide on a normal host, and in the image SSL_CERT_FILE adds a private CA.
import _ "golang.org/x/crypto/x509roots/fallback"
