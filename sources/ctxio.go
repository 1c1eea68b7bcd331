package sources

import (
	"context"
	"fmt"
	"io"
)

// ctxReader stops reading once ctx is done: a download, a git archive or
// an extraction ends between two reads when the fetch is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ctxReadSeeker is a ctxReader that can also seek (a chart index read
// twice).
type ctxReadSeeker struct {
	ctxReader
	io.Seeker
}

// ctxReaderAt stops reading at an offset once ctx is done (a zip
// archive's entries).
type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, fmt.Errorf("extraction stopped: %w", err)
	}
	return c.r.ReadAt(p, off)
}
