package collect_test

import (
	"bytes"
	"io"

	"github.com/clawledger/clawledger/openclaw/archive"
)

func archiveReader(b []byte) (io.Reader, error) { return archive.NewReader(bytes.NewReader(b)) }
