package sources

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxXZDictionary is the largest LZMA2 dictionary an xz archive may ask
// for. The decoder allocates the dictionary a block header announces
// before it decodes a byte, so a 284-byte file may ask for 4 GiB; xz -9
// uses 64 MiB, the most any real source archive needs.
const MaxXZDictionary = 64 << 20

// errXZMalformed is wrapped by checkXZDictionaries when the container does
// not parse; the decoder would refuse it too.
var errXZMalformed = errors.New("malformed xz container")

// checkXZDictionaries walks the xz container of the first size bytes of r
// (streams, block headers, LZMA2 chunk headers, indexes, footers) without
// decoding anything, and refuses a block whose LZMA2 dictionary is larger
// than limit, before a decoder allocates it (ErrUnsafe). It reads the same
// framing the decoder reads, in the same order, so every block header the
// decoder will act on is checked here first.
func checkXZDictionaries(r io.ReaderAt, size, limit int64) error {
	s := xzScanner{r: r, size: size}
	for stream := 0; s.off < size; stream++ {
		if stream > 0 && s.skipStreamPadding() {
			break
		}
		if err := s.stream(stream, limit); err != nil {
			return err
		}
	}
	return nil
}

type xzScanner struct {
	r    io.ReaderAt
	size int64
	off  int64
	buf  [1024]byte
}

func (s *xzScanner) read(n int) ([]byte, error) {
	if n < 0 || n > len(s.buf) || s.off+int64(n) > s.size {
		return nil, fmt.Errorf("%w: truncated at byte %d", errXZMalformed, s.off)
	}
	b := s.buf[:n]
	if _, err := s.r.ReadAt(b, s.off); err != nil && !(errors.Is(err, io.EOF) && s.off+int64(n) <= s.size) {
		return nil, err
	}
	s.off += int64(n)
	return b, nil
}

func (s *xzScanner) byte() (byte, error) {
	b, err := s.read(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// skip advances n bytes, which must lie within the file.
func (s *xzScanner) skip(n int64) error {
	if n < 0 || s.off+n > s.size {
		return fmt.Errorf("%w: truncated at byte %d", errXZMalformed, s.off)
	}
	s.off += n
	return nil
}

// skipStreamPadding skips the zero bytes between streams and reports
// whether the file ends there.
func (s *xzScanner) skipStreamPadding() bool {
	for s.off+4 <= s.size {
		b, err := s.read(4)
		if err != nil || binary.LittleEndian.Uint32(b) != 0 {
			s.off -= 4
			return false
		}
	}
	return s.off >= s.size
}

// xzCheckSizes is the size of a block's check by check type (the low four
// bits of the stream flags).
var xzCheckSizes = [16]int64{0, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 32, 32, 64, 64, 64}

func (s *xzScanner) stream(n int, limit int64) error {
	h, err := s.read(12)
	if err != nil {
		return err
	}
	if string(h[:6]) != "\xfd7zXZ\x00" {
		return fmt.Errorf("%w: stream %d has no xz header", errXZMalformed, n+1)
	}
	check := xzCheckSizes[h[7]&0x0f]
	for block := 1; ; block++ {
		start := s.off
		b, err := s.byte()
		if err != nil {
			return err
		}
		if b == 0 {
			break // the index
		}
		if err := s.blockHeader((int(b)+1)*4-1, block, limit); err != nil {
			return err
		}
		if err := s.lzma2Chunks(); err != nil {
			return err
		}
		if err := s.skip((4-(s.off-start)%4)%4 + check); err != nil {
			return err
		}
	}
	return s.indexAndFooter()
}

// blockHeader reads the rest (n bytes) of a block header and checks the
// dictionary of its LZMA2 filter.
func (s *xzScanner) blockHeader(n, block int, limit int64) error {
	h, err := s.read(n)
	if err != nil {
		return err
	}
	p := xzBytes(h[:len(h)-4]) // without the CRC32
	flags, ok := p.next()
	if !ok {
		return fmt.Errorf("%w: block %d header", errXZMalformed, block)
	}
	for _, present := range []bool{flags&0x40 != 0, flags&0x80 != 0} {
		if present {
			if _, ok := p.varint(); !ok {
				return fmt.Errorf("%w: block %d header", errXZMalformed, block)
			}
		}
	}
	for range int(flags&3) + 1 {
		id, ok1 := p.varint()
		psize, ok2 := p.varint()
		if !ok1 || !ok2 || psize > uint64(len(p)) {
			return fmt.Errorf("%w: block %d filter flags", errXZMalformed, block)
		}
		props := p[:psize]
		p = p[psize:]
		if id != 0x21 { // LZMA2; the decoder refuses other filters
			continue
		}
		if len(props) != 1 || props[0] > 40 {
			return fmt.Errorf("%w: block %d LZMA2 properties", errXZMalformed, block)
		}
		if dict := xzDictionary(props[0]); dict > limit {
			return fmt.Errorf("xz block %d asks for a dictionary of %d MiB, more than the %d MiB any real archive needs (xz -9 uses 64 MiB); a decoder would allocate it before reading a byte: %w", block, dict>>20, limit>>20, ErrUnsafe)
		}
	}
	return nil
}

// xzDictionary decodes the LZMA2 dictionary size byte.
func xzDictionary(c byte) int64 {
	if c == 40 {
		return 1<<32 - 1
	}
	return int64(2|c&1) << (c/2 + 11)
}

// lzma2Chunks skips the LZMA2 chunks of a block up to its end marker,
// reading only the chunk headers.
func (s *xzScanner) lzma2Chunks() error {
	for {
		c, err := s.byte()
		if err != nil {
			return err
		}
		switch {
		case c == 0:
			return nil
		case c == 1 || c == 2: // uncompressed: size-1 in two bytes
			h, err := s.read(2)
			if err != nil {
				return err
			}
			if err := s.skip(int64(binary.BigEndian.Uint16(h)) + 1); err != nil {
				return err
			}
		case c >= 0x80: // LZMA: uncompressed size (two more bytes), compressed size-1, properties
			h, err := s.read(4)
			if err != nil {
				return err
			}
			n := int64(binary.BigEndian.Uint16(h[2:])) + 1
			if c >= 0xc0 {
				n++
			}
			if err := s.skip(n); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: LZMA2 chunk control byte %#x at byte %d", errXZMalformed, c, s.off-1)
		}
	}
}

// indexAndFooter skips an index (its indicator byte read) and the stream
// footer.
func (s *xzScanner) indexAndFooter() error {
	start := s.off - 1
	records, err := s.varint()
	if err != nil {
		return err
	}
	if records > uint64(s.size) {
		return fmt.Errorf("%w: index of %d records", errXZMalformed, records)
	}
	for range 2 * records {
		if _, err := s.varint(); err != nil {
			return err
		}
	}
	if err := s.skip((4-(s.off-start)%4)%4 + 4); err != nil {
		return err
	}
	f, err := s.read(12)
	if err != nil {
		return err
	}
	if string(f[10:]) != "YZ" {
		return fmt.Errorf("%w: no stream footer at byte %d", errXZMalformed, s.off-12)
	}
	return nil
}

func (s *xzScanner) varint() (uint64, error) {
	var v uint64
	for i := 0; i < 9; i++ {
		b, err := s.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: varint at byte %d", errXZMalformed, s.off)
}

// xzBytes reads the fields of a block header.
type xzBytes []byte

func (p *xzBytes) next() (byte, bool) {
	if len(*p) == 0 {
		return 0, false
	}
	b := (*p)[0]
	*p = (*p)[1:]
	return b, true
}

func (p *xzBytes) varint() (uint64, bool) {
	var v uint64
	for i := 0; i < 9; i++ {
		b, ok := p.next()
		if !ok {
			return 0, false
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}
