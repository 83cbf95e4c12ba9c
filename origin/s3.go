package origin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
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
	// ErrNoRegion says neither the options nor the SDK's chain name a region.
	ErrNoRegion = errors.New("no AWS region set")
	// ErrAccessDenied says the store refused the credentials or what they may do.
	ErrAccessDenied = errors.New("access denied")
	// ErrNotFound says the bucket or the key does not exist.
	ErrNotFound = errors.New("no such bucket or key")
	// ErrWrongRegion says the bucket lives in another region than the requests were signed for.
	ErrWrongRegion = errors.New("the bucket is in another region")
)

// s3Object is the S3 transport of an Object: signed GetObject requests with a Range.
type s3Object struct {
	client      *s3.Client
	bucket, key string
}

// IsURL reports whether name is an object at an origin (http://, https:// or s3://) rather
// than a path.
func IsURL(name string) bool {
	return strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://") || IsS3(name)
}

// IsS3 reports whether name is an s3:// URL.
func IsS3(name string) bool { return strings.HasPrefix(name, "s3://") }

// ParseS3URL splits s3://BUCKET/KEY. The key is taken as it is written (S3 keys are not
// URL-escaped) and may hold slashes; neither part may be empty.
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

// openS3 makes the S3 transport of o from the SDK's default configuration.
func (o *Object) openS3(ctx context.Context, name string) error {
	bucket, key, err := ParseS3URL(name)
	if err != nil {
		return &Error{URL: o.display, Err: err}
	}
	client, err := NewS3Client(ctx, o.opts)
	if err != nil {
		return &Error{URL: o.display, Err: err}
	}
	o.s3 = &s3Object{client: client, bucket: bucket, key: key}
	return nil
}

// NewS3Client is the client Open reads s3:// objects with, for other requests to the same
// store (`download --upload`): the SDK's default configuration as opts.S3 adjusts it,
// opts.RootCAs trusted, connections and responses bounded by opts.IdleTimeout
// (DefaultIdleTimeout when zero). A missing region or credentials are ErrNoRegion and
// ErrNoCredentials.
func NewS3Client(ctx context.Context, opts Options) (*s3.Client, error) {
	idle := opts.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.ResponseHeaderTimeout = idle
		tr.DialContext = (&net.Dialer{Timeout: idle, KeepAlive: 30 * time.Second}).DialContext
		tr.MaxIdleConnsPerHost = 64
		if opts.RootCAs != nil {
			tr.TLSClientConfig = &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12}
		}
	})
	loadOpts := []func(*config.LoadOptions) error{config.WithHTTPClient(httpClient)}
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
	})
	if client.Options().Region == "" {
		return nil, ErrNoRegion
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCredentials, err)
	}
	return client, nil
}

// get sends a signed GetObject for n bytes at off; conditional asks for the opened version
// only (If-Match its ETag, else If-Unmodified-Since its date), and a 412 says it changed.
// The answer is the store's own HTTP response, so that every rule of the HTTP transport
// (Content-Range, ETag, size) judges it alike.
func (s *s3Object) get(ctx context.Context, o *Object, off, n int64, conditional bool) (*http.Response, error) {
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &s.key, Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1))}
	if conditional {
		if o.etag != "" {
			in.IfMatch = aws.String(o.etag)
		} else if !o.lastModified.IsZero() {
			in.IfUnmodifiedSince = aws.Time(o.lastModified)
		}
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		var re *smithyhttp.ResponseError
		if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusPreconditionFailed {
			return nil, o.changedError("status 412 for the opened version's ETag")
		}
		return nil, o.s3Error(err)
	}
	raw, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response)
	if !ok || raw.Response == nil {
		out.Body.Close()
		return nil, &Error{URL: o.display, Err: fmt.Errorf("%w: no HTTP response", ErrBadResponse)}
	}
	resp := raw.Response
	resp.Body = out.Body
	return resp, nil
}

// s3Error types a failed S3 request. The SDK's messages name the operation and the store's
// error code, never the credentials or the signature.
func (o *Object) s3Error(err error) error {
	if err := contextError(err); err != nil {
		return &Error{URL: o.display, Err: err}
	}
	status := 0
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		if status != 0 {
			return &Error{URL: o.display, Status: status, Err: fmt.Errorf("%w: %d", ErrStatus, status)}
		}
		return &Error{URL: o.display, Err: transportError(err)}
	}
	code := apiErr.ErrorCode()
	var kind error
	switch {
	case code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed" || code == "IllegalLocationConstraintException" ||
		status == http.StatusMovedPermanently:
		kind = ErrWrongRegion
		if region := bucketRegion(re); region != "" {
			code += ", the bucket's region is " + region
		}
	case status == http.StatusForbidden || code == "AccessDenied" || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch":
		kind = ErrAccessDenied
	case status == http.StatusNotFound || code == "NoSuchBucket" || code == "NoSuchKey":
		kind = ErrNotFound
	default:
		kind = ErrStatus
	}
	return &Error{URL: o.display, Status: status, Err: fmt.Errorf("%w (%s)", kind, code)}
}

// bucketRegion is the region S3 names in a wrong-region answer.
func bucketRegion(re *smithyhttp.ResponseError) string {
	if re == nil || re.Response == nil {
		return ""
	}
	return re.Response.Header.Get("X-Amz-Bucket-Region")
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
