package node

import (
	"context"
	"log/slog"
	"time"

	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/retry"
	"github.com/warren-sandbox/warren/store/s3"
)

// S3Options say where a node's blobs live in S3.
type S3Options struct {
	URL       string // s3://BUCKET[/PREFIX]
	Endpoint  string // http(s)://HOST[:PORT]
	Region    string // default us-east-1
	PathStyle bool
	// Credentials (serve takes them from AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN).
	AccessKey, SecretKey, SessionToken string
	Logger                             *slog.Logger // retries are logged at debug level
}

// OpenS3 opens the bucket as a node's blob store, with store/retry's
// default policy around it and around each step of multipart uploads. It
// fails if the bucket cannot be reached or does not exist. Close the
// second result after the node.
func OpenS3(ctx context.Context, o S3Options) (store.Store, func() error, error) {
	bucket, prefix, err := s3.ParseURL(o.URL)
	if err != nil {
		return nil, nil, err
	}
	p := retry.Policy{}
	if o.Logger != nil {
		log := o.Logger
		p.OnRetry = func(op, key string, attempt int, err error, wait time.Duration) {
			log.Debug("blob store retry", "op", op, "key", key, "attempt", attempt, "wait", wait, "err", err.Error())
		}
	}
	st, err := s3.New(ctx, s3.Config{
		Endpoint: o.Endpoint, Bucket: bucket, Prefix: prefix, Region: o.Region, PathStyle: o.PathStyle,
		AccessKey: o.AccessKey, SecretKey: o.SecretKey, SessionToken: o.SessionToken, PartRetry: &p,
	})
	if err != nil {
		return nil, nil, err
	}
	return retry.Wrap(st, p), st.Close, nil
}
