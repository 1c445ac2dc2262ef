package kafka

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/gzip"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fastGzipFrom is the batch size from which gzip runs at its fastest level.
// A worker's batches of notifications are hundreds of KiB and the fastest
// level halves their compression CPU for a few percent more bytes; a batch
// of one or a few records is compressed at the default level, because at
// the fastest one some fail to shrink (one of TestPublishReadBack's does),
// and franz-go then sends them uncompressed, against the source system's
// gzip.
const fastGzipFrom = 4 << 10

// sizedGzip is a kgo.Compressor that picks gzip's level by batch size.
type sizedGzip struct{ small, large kgo.Compressor }

func newSizedGzip() (kgo.Compressor, error) {
	small, err := kgo.DefaultCompressor(kgo.GzipCompression())
	if err != nil {
		return nil, fmt.Errorf("kafka: gzip: %w", err)
	}
	large, err := kgo.DefaultCompressor(kgo.GzipCompression().WithLevel(gzip.BestSpeed))
	if err != nil {
		return nil, fmt.Errorf("kafka: gzip: %w", err)
	}
	return sizedGzip{small, large}, nil
}

func (s sizedGzip) Compress(dst *bytes.Buffer, src []byte, flags ...kgo.CompressFlag) ([]byte, kgo.CompressionCodecType) {
	if len(src) >= fastGzipFrom {
		return s.large.Compress(dst, src, flags...)
	}
	return s.small.Compress(dst, src, flags...)
}
