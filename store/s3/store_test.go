package s3_test

import (
	"testing"

	"github.com/warren-sandbox/warren/store"
	"github.com/warren-sandbox/warren/store/s3/s3test"
	"github.com/warren-sandbox/warren/store/storetest"
)

func TestStore(t *testing.T) {
	srv := s3test.Start(t)
	storetest.RunSuite(t, func(t *testing.T) store.Store { return srv.NewStore(t) })
}
