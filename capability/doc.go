// Package capability makes and checks the capability URLs under which `sno-iso serve`
// publishes each node's media: the media carry the cluster's private keys and BMCs cannot
// send credentials, so each node's files live under /<Token>/, a token derived from a secret
// shared by every server over the same nodes directory. It owns the token (an HMAC under a
// domain label, compared in constant time), the secret file (its format, creation, rotation
// with a grace period, and its default place, SecretPath), the URL layout (NodeURLs), and
// which nodes of a directory are published (NodeNames). `sno-iso serve`, `serve urls` and
// `bmc boot` all use it, so the URLs they print and the ones the server accepts agree.
package capability
