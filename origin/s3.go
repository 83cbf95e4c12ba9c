package origin

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// S3Options locate and reach s3:// objects. The zero value leaves everything to the AWS
// SDK's default chain: credentials from the environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), the shared config and credentials files
// (AWS_PROFILE), a web identity token file (IRSA, EKS Pod Identity), container credentials
// or the instance metadata service; the region and endpoint from the environment
// (AWS_REGION, AWS_ENDPOINT_URL_S3) or the shared config.
type S3Options struct {
	// Endpoint is the store's URL (an on-premises store: Ceph RGW, MinIO, SeaweedFS); ""
	// uses the SDK's resolution.
	Endpoint string
	// Region signs the requests; "" uses the SDK's resolution, and us-east-1 when that finds
	// none but an endpoint is set (on-premises stores take any region).
	Region string
	// PathStyle addresses the bucket in the path (https://host/bucket/key) instead of the host
	// name (https://bucket.host/key), as most on-premises stores need.
	PathStyle bool
}

// S3 errors, each in an *Error.
var (
	// ErrNoCredentials says the SDK's default chain found no credentials.
	ErrNoCredentials = errors.New("no AWS credentials found")
	// ErrCredentialsRefused says AWS STS refused to hand out credentials for the chain's role:
	// a web identity token it does not accept (invalid, expired, another audience) or a role
	// that does not trust it. Asking again does not help.
	ErrCredentialsRefused = errors.New("AWS STS refused to issue credentials")
	// ErrCredentialsUnavailable says AWS STS did not hand out credentials for the chain's role
	// for a reason of its own or of the network: it throttled the request, failed, could not
	// reach the identity provider, or could not be reached. It may pass.
	ErrCredentialsUnavailable = errors.New("AWS STS did not issue credentials")
	// ErrNoRegion says neither the options nor the SDK's chain name a region.
	ErrNoRegion = errors.New("no AWS region set")
	// ErrAccessDenied says the store refused the credentials or what they may do.
	ErrAccessDenied = errors.New("access denied")
	// ErrBadCredentials, an ErrAccessDenied, says the store does not accept the credentials
	// themselves (unknown or expired keys, a wrong secret).
	ErrBadCredentials = fmt.Errorf("%w: the store does not accept these credentials", ErrAccessDenied)
	// ErrNotFound says the bucket or the key does not exist.
	ErrNotFound = errors.New("no such bucket or key")
	// ErrNoSuchBucket, an ErrNotFound, says the bucket does not exist.
	ErrNoSuchBucket = fmt.Errorf("%w: no such bucket", ErrNotFound)
	// ErrWrongRegion says the bucket lives in another region than the requests were signed for.
	ErrWrongRegion = errors.New("the bucket is in another region")
)

// IsURL reports whether name is an object at an origin (http://, https:// or s3://) rather
// than a path.
func IsURL(name string) bool {
	return strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://") || IsS3(name)
}

// IsS3 reports whether name is an s3:// URL.
func IsS3(name string) bool { return strings.HasPrefix(name, "s3://") }

// ParseS3URL splits s3://BUCKET/KEY. The key is everything after the bucket's slash, taken
// as it is written, as the AWS CLI takes s3:// URIs: '#', '?', '%' and spaces are part of it,
// and it may hold slashes; neither part may be empty.
func ParseS3URL(name string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(name, "s3://")
	if !ok {
		return "", "", ErrNotHTTP
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" || key == "" {
		return "", "", fmt.Errorf("%w: want s3://BUCKET/KEY", ErrNotHTTP)
	}
	return bucket, key, nil
}

// S3RequestURL is the URL an HTTP request for the object s3://BUCKET/KEY (as ParseS3URL
// reads it) carries to S3RoundTripper: the key escaped once, so that parsing it back gives
// the key in URL.Path, whatever characters it holds.
func S3RequestURL(name string) (string, error) {
	bucket, key, err := ParseS3URL(name)
	if err != nil {
		return "", err
	}
	reqURL := (&url.URL{Scheme: "s3", Host: bucket, Path: "/" + key}).String()
	if u, err := url.Parse(reqURL); err != nil || u.Host != bucket {
		return "", fmt.Errorf("%w: %q is not a bucket name", ErrNotHTTP, bucket)
	}
	return reqURL, nil
}

// openS3 makes o's transport the S3 client's: its requests go to S3RoundTripper.
func (o *Object) openS3(ctx context.Context, name string) error {
	reqURL, err := S3RequestURL(name)
	if err != nil {
		return &Error{URL: o.display, Err: err}
	}
	client, err := NewS3Client(ctx, o.opts)
	if err != nil {
		return &Error{URL: o.display, Err: err}
	}
	o.rawURL, o.s3 = reqURL, true
	o.client = &http.Client{Transport: S3RoundTripper(client)}
	return nil
}

// credentialsRefreshWindow is how long before they expire temporary credentials are
// renewed: the SDK's cache renews those of a web identity token only once they have
// expired, when a request signed a moment before reaches the store after, or the store's
// clock runs ahead, and is refused. The SDK's larger windows (container credentials) stay.
const credentialsRefreshWindow = time.Minute

// NewS3Client is the client Open reads s3:// objects with, for other requests to the same
// store (`download --upload`): the SDK's default configuration as opts.S3 adjusts it,
// opts.RootCAs (and AWS_CA_BUNDLE's CAs) trusted instead of the system's roots, connections
// and responses bounded by opts.Idle(). Its credentials are retrieved once here: a missing
// region or credentials are ErrNoRegion and ErrNoCredentials, credentials STS refuses
// ErrCredentialsRefused, those it does not issue otherwise ErrCredentialsUnavailable;
// temporary ones are renewed credentialsRefreshWindow before they expire.
func NewS3Client(ctx context.Context, opts Options) (*s3.Client, error) {
	idle := opts.Idle()
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.ResponseHeaderTimeout = idle
		tr.DialContext = (&net.Dialer{Timeout: idle, KeepAlive: 30 * time.Second}).DialContext
		tr.MaxIdleConnsPerHost = 64
		if opts.RootCAs != nil {
			// The SDK appends AWS_CA_BUNDLE into this pool: a copy keeps the caller's, which
			// serve hands to every attempt, from growing and from changing under a transport.
			tr.TLSClientConfig = &tls.Config{RootCAs: opts.RootCAs.Clone(), MinVersion: tls.VersionTLS12}
		}
	})
	loadOpts := []func(*config.LoadOptions) error{config.WithHTTPClient(httpClient),
		config.WithCredentialsCacheOptions(func(o *aws.CredentialsCacheOptions) {
			o.ExpiryWindow = max(o.ExpiryWindow, credentialsRefreshWindow)
		})}
	if opts.S3.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opts.S3.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(s3o *s3.Options) {
		if opts.S3.Endpoint != "" {
			s3o.BaseEndpoint = aws.String(opts.S3.Endpoint)
		}
		if s3o.Region == "" && s3o.BaseEndpoint != nil {
			s3o.Region = "us-east-1"
		}
		s3o.UsePathStyle = opts.S3.PathStyle
		// Ranges carry no checksum to check; a Range that is not the whole object never does.
		s3o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		// Uploads carry no CRC32 (a header, or an aws-chunked trailer) unless the operation
		// requires one: older Ceph RGW, NooBaa/MCG and MinIO refuse them. SigV4 signs the
		// payload's sha256 anyway, and AWS needs no more.
		s3o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	})
	if client.Options().Region == "" {
		return nil, ErrNoRegion
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		if failure := stsFailure(err); failure != nil {
			return nil, failure
		}
		return nil, fmt.Errorf("%w: %v", ErrNoCredentials, err)
	}
	return client, nil
}

// S3RoundTripper sends GET requests for s3://BUCKET/KEY URLs (made by S3RequestURL, the key
// in URL.Path) as GetObject requests of
// client, signed with its credentials, so that an HTTP client reads S3 objects as it reads a
// web server: Range and If-Match go to S3 as they are; If-Range, which S3 lacks, is If-Match
// and, when that fails, a second request for the whole object, as If-Range means. S3 gives
// every object an ETag, so a date in If-Range is not pinned: If-Unmodified-Since would also
// pass for another version written up to that date, not only the one of that Last-Modified,
// so a date gets the whole object, as If-Range allows a server that cannot check it. The
// answer is the store's own response; one with an error status has the store's error code as
// its body. A request that got no answer is an error.
func S3RoundTripper(client *s3.Client) http.RoundTripper { return s3RoundTripper{client} }

type s3RoundTripper struct{ client *s3.Client }

func (rt s3RoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	bucket, key := req.URL.Host, strings.TrimPrefix(req.URL.Path, "/")
	if req.Method != http.MethodGet || req.URL.Scheme != "s3" || bucket == "" || key == "" ||
		req.URL.RawQuery != "" || req.URL.Fragment != "" {
		return nil, fmt.Errorf("%w: only a GET of s3://BUCKET/KEY goes to S3", ErrNotHTTP)
	}
	in := &s3.GetObjectInput{Bucket: &bucket, Key: &key}
	if r := req.Header.Get("Range"); r != "" {
		in.Range = &r
	}
	if m := req.Header.Get("If-Match"); m != "" {
		in.IfMatch = &m
	}
	ifRange, rangeIfMatch := req.Header.Get("If-Range"), false
	if ifRange != "" && in.Range != nil {
		if _, err := http.ParseTime(ifRange); err == nil {
			in.Range = nil
		} else {
			in.IfMatch, rangeIfMatch = &ifRange, true
		}
	}
	resp, err := rt.get(req.Context(), in)
	if err == nil && rangeIfMatch && resp.StatusCode == http.StatusPreconditionFailed {
		resp.Body.Close()
		in.Range, in.IfMatch = nil, nil
		resp, err = rt.get(req.Context(), in)
	}
	if err != nil {
		return nil, err
	}
	resp.Request = req
	return resp, nil
}

func (rt s3RoundTripper) get(ctx context.Context, in *s3.GetObjectInput) (*http.Response, error) {
	out, err := rt.client.GetObject(ctx, in)
	if err == nil {
		raw, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response)
		if !ok || raw.Response == nil {
			out.Body.Close()
			return nil, fmt.Errorf("%w: no HTTP response", ErrBadResponse)
		}
		resp := raw.Response
		resp.Body = out.Body
		return resp, nil
	}
	// A refresh of the credentials that STS did not answer carries STS's answer or transport
	// error, not the store's.
	if failure := stsFailure(err); failure != nil {
		return nil, failure
	}
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) || re.Response == nil || re.Response.Response == nil || re.HTTPStatusCode() == 0 {
		if err := contextError(err); err != nil {
			return nil, err
		}
		return nil, transportError(err)
	}
	code := http.StatusText(re.HTTPStatusCode())
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() != "" {
		code = apiErr.ErrorCode()
	}
	resp := *re.Response.Response
	resp.Header = resp.Header.Clone()
	resp.Header.Del("Content-Length")
	// The SDK points Location of an S3 redirect (a wrong region) nowhere, to stop its client
	// from following it; the caller's client must not follow it either.
	resp.Header.Del("Location")
	resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(code)), int64(len(code))
	return &resp, nil
}

// S3ErrorKind is what an S3 store's error answer means, from its HTTP status and its error
// code ("" when unknown): ErrWrongRegion, ErrBadCredentials, ErrAccessDenied,
// ErrNoSuchBucket or ErrNotFound; nil for any other answer.
func S3ErrorKind(status int, code string) error {
	switch {
	case status == http.StatusMovedPermanently || code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed" ||
		code == "IllegalLocationConstraintException":
		return ErrWrongRegion
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "ExpiredToken" || code == "InvalidToken":
		return ErrBadCredentials
	case code == "NoSuchBucket":
		return ErrNoSuchBucket
	case status == http.StatusForbidden || code == "AccessDenied":
		return ErrAccessDenied
	case status == http.StatusNotFound || code == "NoSuchKey":
		return ErrNotFound
	}
	return nil
}

// S3ErrorKindOf is S3ErrorKind of the store's answer an AWS SDK error carries, and nil when
// err holds no answer. When it carries AWS STS's failure to renew the credentials instead,
// it is ErrCredentialsRefused or ErrCredentialsUnavailable with STS's error code and message
// or its transport error: the whole story, for the caller to show instead of err's chain of
// SDK calls.
func S3ErrorKindOf(err error) error {
	if failure := stsFailure(err); failure != nil {
		return failure
	}
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) {
		return nil
	}
	code := ""
	if apiErr := smithy.APIError(nil); errors.As(err, &apiErr) {
		code = apiErr.ErrorCode()
	}
	return S3ErrorKind(re.HTTPStatusCode(), code)
}

// stsRefusalCodes are the AWS STS error codes of AssumeRoleWithWebIdentity and AssumeRole (the
// STS API reference, with its common errors) that blame the request itself: the token, the
// role or its trust, the caller's keys, the session policy, a region STS is disabled in.
// STS's other answers (Throttling, InternalFailure, ServiceUnavailable, IDPCommunicationError,
// which AWS documents as transient) say nothing is wrong with it.
var stsRefusalCodes = map[string]bool{
	"InvalidIdentityToken": true, "ExpiredTokenException": true, "ExpiredToken": true, "IDPRejectedClaim": true,
	"AccessDenied": true, "InvalidClientTokenId": true, "InvalidParameterValue": true, "ValidationError": true,
	"RegionDisabledException": true, "MalformedPolicyDocument": true, "PackedPolicyTooLarge": true,
}

// stsFailure is the error of a request to AWS STS for the chain's credentials (a web
// identity token's or an assumed role's) that err holds: ErrCredentialsRefused with STS's
// error code and message when that code blames the request, ErrCredentialsUnavailable with
// them for STS's other answers, and with the transport error when STS did not answer. nil
// when err holds no such failure, or a cancellation, which is the caller's.
func stsFailure(err error) error {
	if contextError(err) != nil {
		return nil
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		// "STS" is the service ID of aws-sdk-go-v2/service/sts, which the chain calls.
		op, ok := e.(*smithy.OperationError)
		if !ok || op.ServiceID != "STS" {
			continue
		}
		var apiErr smithy.APIError
		switch {
		case errors.As(op.Err, &apiErr) && stsRefusalCodes[apiErr.ErrorCode()]:
			return fmt.Errorf("%w (%s: %s)", ErrCredentialsRefused, apiErr.ErrorCode(), apiErr.ErrorMessage())
		case errors.As(op.Err, &apiErr):
			return fmt.Errorf("%w (%s: %s)", ErrCredentialsUnavailable, apiErr.ErrorCode(), apiErr.ErrorMessage())
		}
		return fmt.Errorf("%w (no answer from STS: %v)", ErrCredentialsUnavailable, transportError(op.Err))
	}
	return nil
}

// s3StatusError types an S3 store's error answer, whose body S3RoundTripper made its error
// code.
func (o *Object) s3StatusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	code := string(b)
	kind := cmp.Or(S3ErrorKind(resp.StatusCode, code), ErrStatus)
	if region := resp.Header.Get("X-Amz-Bucket-Region"); kind == ErrWrongRegion && region != "" {
		code += ", the bucket's region is " + region
	}
	return &Error{URL: o.display, Status: resp.StatusCode, Err: fmt.Errorf("%w (%s)", kind, code)}
}

// contextError is the cancellation or deadline that ended a request, if one did: what the
// watchdog and a client that went away cause, for Error.Timeout to see.
func contextError(err error) error {
	for _, e := range []error{context.DeadlineExceeded, context.Canceled} {
		if errors.Is(err, e) {
			return e
		}
	}
	return nil
}
