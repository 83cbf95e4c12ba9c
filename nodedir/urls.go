package nodedir

import (
	"path/filepath"

	"github.com/sno-iso/sno-iso/capability"
)

// Access is how a server over the nodes directory publishes its nodes: under the secret in
// SecretFile (default: the nodes directory's, capability.SecretPath), or with Open under
// plain URLs.
type Access struct {
	SecretFile string
	Open       bool
}

// ServedURLs are the URLs at which `sno-iso serve` at serveURL publishes the node in the
// node directory dir: the capability URLs `serve urls` prints, their token derived from the
// secret the server reads, or the plain URLs of an open server. Errors reading the secret
// wrap capability.ErrNoSecret or capability.ErrBadSecret.
func ServedURLs(serveURL, dir string, access Access) (capability.URLs, error) {
	dir = filepath.Clean(dir)
	var secret *capability.Secret
	if !access.Open {
		path := access.SecretFile
		if path == "" {
			// The nodes directory, the node directory's parent, keeps the secret.
			path = capability.SecretPath(filepath.Dir(dir))
		}
		var err error
		if secret, err = capability.ReadSecretFile(path); err != nil {
			return capability.URLs{}, err
		}
	}
	return capability.NodeURLs(serveURL, secret, filepath.Base(dir)), nil
}
