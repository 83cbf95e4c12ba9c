package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// envVar is an environment variable that commands read, for their help's ENVIRONMENT and the
// man page. readBy says which commands read it, by the options that lead them to.
type envVar struct {
	name    string
	meaning string
	readBy  func(*cli.Command) bool
}

// environment lists every environment variable sno-iso reads, directly or through the Go
// library (os.UserCacheDir, the HTTP client's proxy and certificate lookups, os.TempDir) and
// the AWS SDK.
var environment = []envVar{
	{envBMCUsername, "the BMC account's user name, when --credentials-file and sno.yaml name no file", readsBMCAccount},
	{envBMCPassword, "the BMC account's password, with " + envBMCUsername, readsBMCAccount},
	{"XDG_CACHE_HOME", "the user cache directory on Linux, holding the download cache sno-iso/ (default: ~/.cache)", readsCache},
	{"HOME", "the home directory, where the cache is when XDG_CACHE_HOME is not set", readsCache},
	{"HTTPS_PROXY", "the proxy for https:// requests (also https_proxy)", readsHTTP},
	{"HTTP_PROXY", "the proxy for http:// requests (also http_proxy)", readsHTTP},
	{"NO_PROXY", "hosts, domains and networks reached without a proxy, comma-separated (also no_proxy)", readsHTTP},
	{"SSL_CERT_FILE", "a PEM bundle of CAs to trust for https instead of the system's", readsHTTP},
	{"SSL_CERT_DIR", "directories (colon-separated) of PEM CA certificates to trust for https", readsHTTP},
	{"AWS_ACCESS_KEY_ID", "the access key of s3:// requests (with AWS_SECRET_ACCESS_KEY; the AWS SDK's default chain)", readsS3},
	{"AWS_SECRET_ACCESS_KEY", "the secret key of s3:// requests", readsS3},
	{"AWS_SESSION_TOKEN", "the session token of temporary s3:// credentials", readsS3},
	{"AWS_PROFILE", "the profile of ~/.aws/config and ~/.aws/credentials to take credentials and region from", readsS3},
	{"AWS_CONFIG_FILE", "the shared config file (default: ~/.aws/config)", readsS3},
	{"AWS_SHARED_CREDENTIALS_FILE", "the shared credentials file (default: ~/.aws/credentials)", readsS3},
	{"AWS_REGION", "the region s3:// requests are signed for (an --s3-region option wins)", readsS3},
	{"AWS_ENDPOINT_URL_S3", "the URL of the S3 store to reach instead of AWS (an --s3-endpoint option wins)", readsS3},
	{"AWS_WEB_IDENTITY_TOKEN_FILE", "a web identity token to exchange for credentials (EKS IRSA), with AWS_ROLE_ARN", readsS3},
	{"AWS_ROLE_ARN", "the role that the web identity token is exchanged for", readsS3},
	{"AWS_CA_BUNDLE", "a PEM bundle of the CAs trusted for s3:// requests instead of the system's roots (with --ca-file's)", readsS3},
	{"GOMEMLIMIT", "the Go runtime's soft memory limit; when unset, serve sets one from --node-cache-size", readsNodeCache},
	{"TMPDIR", "the directory for temporary images: serve's media and its copy of an --iso URL (unless --iso-copy-dir), and outputs " +
		"written to standard output (default: /tmp)", readsTempDir},
}

// hasFlag reports whether cmd has an option of one of the names.
func hasFlag(cmd *cli.Command, names ...string) bool {
	return slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return slices.Contains(names, f.Names()[0]) })
}

func readsBMCAccount(cmd *cli.Command) bool { return hasFlag(cmd, "credentials-file") }

func readsNodeCache(cmd *cli.Command) bool { return hasFlag(cmd, "node-cache-size") }

func readsCache(cmd *cli.Command) bool { return hasFlag(cmd, "cache-dir") }

// readsHTTP: the commands that fetch from a stream, a URL or a mirror, talk to a BMC or ask
// sno-iso serve.
func readsHTTP(cmd *cli.Command) bool {
	return hasFlag(cmd, "stream", "url", "credentials-file", "serve-url", "stream-base-url")
}

// readsS3: the commands that take an s3:// URL, which the AWS SDK's default chain configures:
// those with S3 options, or an --iso that may be a URL.
func readsS3(cmd *cli.Command) bool {
	return hasFlag(cmd, "s3-endpoint") || slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool {
		doc, ok := f.(cli.DocGenerationFlag)
		return ok && f.Names()[0] == "iso" && strings.Contains(doc.GetUsage(), "URL")
	})
}

// readsTempDir: serve composes media in the temporary directory; a minimal ISO written to
// standard output is assembled there.
func readsTempDir(cmd *cli.Command) bool {
	return hasFlag(cmd, "rootfs-url", "node-cache-size")
}

// environmentOf lists the variables cmd reads, in the table's order.
func environmentOf(cmd *cli.Command) []envVar {
	var vars []envVar
	for _, v := range environment {
		if v.readBy(cmd) {
			vars = append(vars, v)
		}
	}
	return vars
}

// environmentSection is the ENVIRONMENT block of cmd's help, "" when it reads none.
func environmentSection(cmd *cli.Command, width int) string {
	vars := environmentOf(cmd)
	if len(vars) == 0 {
		return ""
	}
	nameWidth := 0
	for _, v := range vars {
		nameWidth = max(nameWidth, len(v.name))
	}
	column := helpIndent + nameWidth + 2
	indent := strings.Repeat(" ", column)
	var b strings.Builder
	b.WriteString("\nENVIRONMENT:\n")
	for _, v := range vars {
		b.WriteString(strings.Repeat(" ", helpIndent) + v.name + strings.Repeat(" ", column-helpIndent-len(v.name)))
		b.WriteString(strings.Join(wrapWords(v.meaning, width-column), "\n"+indent) + "\n")
	}
	return b.String()
}
