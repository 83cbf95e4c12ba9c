package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/sno-iso/sno-iso/origin"
	"github.com/sno-iso/sno-iso/serve"
	"github.com/urfave/cli/v2"
)

// advice is what the command line adds to a library error: the flag or command that fixes
// it, which the libraries do not know about.
var advice = []struct {
	err  error
	hint string
}{
	{isobuilder.ErrCustomized, "; reset it with `sno-iso reset` (or `coreos-installer iso reset`), " +
		"or start from the pristine ISO, and try again"},
	{isobuilder.ErrKargsDisagree, ", `sno-iso kargs reset` restores the defaults"},
	{coreos.ErrNotBootstrapInPlace, ", or pass --allow-any-ignition to embed this config unchanged"},
	{coreos.ErrNoInstallationDisk, ", or --installation-disk"},
	{coreos.ErrKargRemoval, "; remove them with --delete-karg (coreOSInstallation.deleteKargs) instead"},
	{isobuilder.ErrHasIgnition, "; use -f to replace it"},
	{isobuilder.ErrHasKeyfiles, "; use -f to replace them"},
	{isobuilder.ErrNoMiniso, "; `sno-iso minimal ISO OUT` rebuilds a minimal ISO without it"},
	{serve.ErrNodesNotDir, "; " + nodesDirAdvice},
	{isobuilder.ErrOutsideOutputDir, "; remove the link, or choose another output directory"},
	{origin.ErrNoRanges, "; --iso needs a web server or object store that answers Range requests (nginx, S3, GCS, MinIO do), " +
		"or download the ISO and pass its path"},
	{origin.ErrNoValidator, "; serve the ISO from a server that sends ETag or Last-Modified (nginx, S3 do), " +
		"or fetch it once with `sno-iso download --url URL --sha256 HEX` and pass its path to --iso"},
	{origin.ErrStatus, "; check the --iso URL (a pre-signed URL may have expired)"},
	{origin.ErrBadResponse, "; check the --iso URL (a pre-signed URL may have expired)"},
	{origin.ErrNoCredentials, "; the AWS SDK's chain looked in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN), " +
		"the shared files ~/.aws/credentials and ~/.aws/config (AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE), " +
		"a web identity token (AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN: IRSA), container credentials " +
		"(AWS_CONTAINER_CREDENTIALS_FULL_URI: EKS Pod Identity, ECS) and the EC2 instance metadata service: set one"},
	{origin.ErrCredentialsRefused, credentialsRefusedAdvice},
	{origin.ErrCredentialsUnavailable, "; STS throttling or failing passes (serve keeps trying; run the command again later). " +
		"When STS could not be reached, let the pod reach the STS endpoint of the region AWS_REGION names, " +
		"sts.REGION.amazonaws.com on port 443 (the AWS SDK for Go always asks the regional endpoint, whatever " +
		"AWS_STS_REGIONAL_ENDPOINTS says): allow that egress, or create an STS interface VPC endpoint in a private VPC, " +
		"or name the endpoint to use with AWS_ENDPOINT_URL_STS"},
	{origin.ErrNoRegion, "; give the bucket's region with --s3-region or AWS_REGION"},
	{origin.ErrWrongRegion, "; give the bucket's region with --s3-region or AWS_REGION"},
	{origin.ErrAccessDenied, "; check the credentials the AWS SDK found (AWS_ACCESS_KEY_ID and its secret, or AWS_PROFILE's) and " +
		"that they may read the object (s3:GetObject)"},
	{origin.ErrNotFound, "; check the bucket and key of the s3:// URL, and --s3-endpoint and --s3-path-style for an on-premises store"},
}

// credentialsRefusedAdvice is what to check when AWS STS refuses the credentials of the
// chain's role.
const credentialsRefusedAdvice = "; check the web identity token in the file AWS_WEB_IDENTITY_TOKEN_FILE names (IRSA: the " +
	"service account's projected token, with the audience sts.amazonaws.com) and that the role AWS_ROLE_ARN names trusts " +
	"its issuer and service account (the role's trust policy, the service account's eks.amazonaws.com/role-arn annotation); " +
	"with AWS_PROFILE, its web_identity_token_file and role_arn"

// errorText is what the user reads of err: its text, followed by the advice of the first
// library error it wraps that has some.
func errorText(err error) string {
	for _, a := range advice {
		if errors.Is(err, a.err) {
			return err.Error() + a.hint
		}
	}
	return err.Error()
}

// warningFlags names the flag that does what a warning's sno.yaml setting does.
var warningFlags = map[node.WarningKind]string{node.LiveIPNotCopied: "--copy-network", node.MinimalWithoutRootfsURL: "--rootfs-url"}

// overrideFlags names the flag that set the value a warning is about when the warning has no
// Source: the node's overrides are the command line's flags.
var overrideFlags = map[node.WarningKind]string{node.DiskWarning: "--installation-disk"}

// dropInOverrideFlags are overrideFlags as the coreos-installer drop-in's customize spells them.
var dropInOverrideFlags = map[node.WarningKind]string{node.DiskWarning: "--dest-device"}

// printWarnings prints a node's warnings on c's standard error, naming the flag beside the
// setting they advise, or the flag that set the value they are about.
func printWarnings(c *cli.Context, warnings []node.Warning) {
	w, overrideFlags := c.App.ErrWriter, overrideFlags
	if isDropIn(c) {
		overrideFlags = dropInOverrideFlags
	}
	for _, warning := range warnings {
		text := warning.String()
		if flag, ok := warningFlags[warning.Kind]; ok && warning.Setting != "" {
			text = strings.Replace(text, warning.Setting, warning.Setting+" (or "+flag+")", 1)
		}
		if flag, ok := overrideFlags[warning.Kind]; ok && warning.Source == "" && warning.Setting != "" {
			text = strings.Replace(text, warning.Setting, flag, 1)
		}
		fmt.Fprintf(w, "Warning: %s\n", text)
	}
}

// forceAdvice tells how to replace an output that exists.
func forceAdvice(err error) error {
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w; use --force to replace it", err)
	}
	return err
}
