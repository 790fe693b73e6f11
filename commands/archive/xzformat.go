package archive

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"

	"github.com/ulikunitz/xz/lzma"

	"github.com/warren-sandbox/warren/commands"
)

// The .xz container (streams of blocks, an index and a footer each) is
// read here, and only the LZMA2 data inside a block is handed to
// ulikunitz/xz's lzma package. The library's own xz reader allocates
// whatever dictionary a block header asks for, up to 4 GiB for a file of a
// hundred bytes; reading the header first lets the dictionary be charged
// to the sandbox's memory budget before anything is allocated.

var (
	errXzFormat  = errors.New("File format not recognized")
	errXzCorrupt = errors.New("Compressed data is corrupt")
	errXzEOF     = errors.New("Unexpected end of input")
	errXzOptions = errors.New("Unsupported options")
	errXzCheck   = errors.New("Unsupported type of integrity check")
)

// isXzErr: err is one of the decoder's reports about its input.
func isXzErr(err error) bool {
	for _, e := range []error{errXzFormat, errXzCorrupt, errXzEOF, errXzOptions, errXzCheck} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

var xzMagic = []byte{0xfd, '7', 'z', 'X', 'Z', 0}

// xzDecoderOverhead is charged with each dictionary: the decoder's
// probability tables and buffers beside it.
const xzDecoderOverhead = 1 << 20

// countReader counts the bytes read through it (a block's compressed size).
type countReader struct {
	r *bufio.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

type xzRecord struct{ unpadded, uncompressed uint64 }

// xzReader decodes one or more concatenated .xz streams (stream padding
// between them) into the plain bytes; single stops after the first.
type xzReader struct {
	cr     countReader
	mem    *commands.Memory
	single bool

	streams int
	flags   [2]byte // the current stream's flags
	check   hash.Hash
	ckLen   int
	records []xzRecord

	block      io.Reader // the current block's LZMA2 decoder
	charged    int64     // its dictionary's charge
	blockStart int64     // cr.n where its data began
	hdrLen     int64
	csize      int64 // declared sizes, -1 when absent
	usize      int64
	out        int64 // bytes it produced

	err error
}

func newXzReader(r *bufio.Reader, mem *commands.Memory, single bool) *xzReader {
	return &xzReader{cr: countReader{r: r}, mem: mem, single: single}
}

func (x *xzReader) Read(p []byte) (int, error) {
	for x.err == nil {
		if x.block == nil {
			x.err = x.next()
			continue
		}
		n, err := x.block.Read(p)
		if n > 0 {
			x.check.Write(p[:n])
			x.out += int64(n)
			if x.usize >= 0 && x.out > x.usize {
				x.err = errXzCorrupt
				return 0, x.err
			}
		}
		switch {
		case err == io.EOF:
			x.err = x.endBlock()
		case err != nil:
			x.err = xzDataErr(err)
		}
		if n > 0 {
			return n, nil
		}
	}
	x.release()
	return 0, x.err
}

// Close gives the current dictionary's charge back.
func (x *xzReader) Close() error { x.release(); return nil }

func (x *xzReader) release() {
	x.mem.Release(x.charged)
	x.charged = 0
}

// xzDataErr is what a failure inside LZMA2 data reads as.
func xzDataErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errXzEOF
	}
	var me *commands.MemoryLimitError
	if errors.As(err, &me) {
		return err
	}
	return errXzCorrupt
}

func (x *xzReader) full(b []byte) error {
	if _, err := io.ReadFull(&x.cr, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errXzEOF
		}
		return err
	}
	return nil
}

// next reads headers up to the next block's data (x.block set), or ends
// the input (io.EOF).
func (x *xzReader) next() error {
	if x.check == nil { // between streams
		if x.streams > 0 {
			if x.single {
				return io.EOF
			}
			// stream padding: zero bytes in groups of four
			pad := 0
			for {
				b, err := x.cr.ReadByte()
				if err != nil {
					if pad%4 != 0 {
						return errXzCorrupt
					}
					return io.EOF
				}
				if b != 0 {
					x.cr.r.UnreadByte()
					x.cr.n--
					break
				}
				pad++
			}
			if pad%4 != 0 {
				return errXzCorrupt
			}
		}
		if err := x.streamHeader(); err != nil {
			return err
		}
	}
	b, err := x.cr.ReadByte()
	if err != nil {
		return errXzEOF
	}
	if b == 0 {
		if err := x.index(); err != nil {
			return err
		}
		x.check, x.records = nil, x.records[:0]
		x.streams++
		return nil
	}
	return x.blockHeader(b)
}

func (x *xzReader) streamHeader() error {
	var h [12]byte
	if err := x.full(h[:]); err != nil {
		if x.streams == 0 && err == errXzEOF {
			return errXzFormat
		}
		return err
	}
	if !bytes.Equal(h[:6], xzMagic) {
		if x.streams == 0 {
			return errXzFormat
		}
		return errXzCorrupt
	}
	if crc32.ChecksumIEEE(h[6:8]) != binary.LittleEndian.Uint32(h[8:]) {
		return errXzCorrupt
	}
	if h[6] != 0 || h[7]&0xf0 != 0 {
		return errXzOptions
	}
	x.flags = [2]byte{h[6], h[7]}
	switch h[7] {
	case 0x00:
		x.check, x.ckLen = nopHash{}, 0
	case 0x01:
		x.check, x.ckLen = crc32.NewIEEE(), 4
	case 0x04:
		x.check, x.ckLen = crc64.New(crc64.MakeTable(crc64.ECMA)), 8
	case 0x0a:
		x.check, x.ckLen = sha256.New(), 32
	default:
		return errXzCheck
	}
	return nil
}

// vli reads a variable-length integer (at most 9 bytes) from b.
func vli(b []byte) (uint64, int, bool) {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			if i > 0 && b[i] == 0 {
				return 0, 0, false // not the shortest encoding
			}
			return v, i + 1, true
		}
	}
	return 0, 0, false
}

// xzDictSize decodes LZMA2's dictionary-size property byte.
func xzDictSize(b byte) (int64, bool) {
	switch {
	case b > 40:
		return 0, false
	case b == 40:
		return 0xffffffff, true
	}
	return int64(2|b&1) << (b/2 + 11), true
}

func (x *xzReader) blockHeader(size byte) error {
	n := (int(size) + 1) * 4
	h := make([]byte, n)
	h[0] = size
	if err := x.full(h[1:]); err != nil {
		return err
	}
	if crc32.ChecksumIEEE(h[:n-4]) != binary.LittleEndian.Uint32(h[n-4:]) {
		return errXzCorrupt
	}
	flags := h[1]
	if flags&0x3c != 0 {
		return errXzOptions
	}
	body := h[2 : n-4]
	x.csize, x.usize = -1, -1
	read := func() (uint64, bool) {
		v, k, ok := vli(body)
		if ok {
			body = body[k:]
		}
		return v, ok
	}
	if flags&0x40 != 0 {
		v, ok := read()
		if !ok || v == 0 || v > 1<<62 {
			return errXzCorrupt
		}
		x.csize = int64(v)
	}
	if flags&0x80 != 0 {
		v, ok := read()
		if !ok || v > 1<<62 {
			return errXzCorrupt
		}
		x.usize = int64(v)
	}
	// One filter, LZMA2 (0x21) with its dictionary byte: what xz writes
	// unless told otherwise. BCJ and delta chains are refused by name.
	if flags&3 != 0 {
		return errXzOptions
	}
	id, ok1 := read()
	psize, ok2 := read()
	if !ok1 || !ok2 {
		return errXzCorrupt
	}
	if id != 0x21 || psize != 1 || len(body) < 1 {
		return errXzOptions
	}
	dict, ok := xzDictSize(body[0])
	if !ok {
		return errXzOptions
	}
	for _, b := range body[1:] {
		if b != 0 {
			return errXzOptions
		}
	}
	dict = max(dict, lzma.MinDictCap)
	x.release()
	if err := x.mem.Charge(dict + xzDecoderOverhead); err != nil {
		return err
	}
	x.charged = dict + xzDecoderOverhead
	x.hdrLen, x.blockStart, x.out = int64(n), x.cr.n, 0
	x.check.Reset()
	r, err := lzma.Reader2Config{DictCap: int(dict)}.NewReader2(&x.cr)
	if err != nil {
		return xzDataErr(err)
	}
	x.block = r
	return nil
}

// endBlock checks a finished block: its sizes, padding and check.
func (x *xzReader) endBlock() error {
	x.block = nil
	x.release()
	csize := x.cr.n - x.blockStart
	if (x.csize >= 0 && csize != x.csize) || (x.usize >= 0 && x.out != x.usize) {
		return errXzCorrupt
	}
	pad := make([]byte, (4-csize%4)%4)
	if err := x.full(pad); err != nil {
		return err
	}
	for _, b := range pad {
		if b != 0 {
			return errXzCorrupt
		}
	}
	ck := make([]byte, x.ckLen)
	if err := x.full(ck); err != nil {
		return err
	}
	sum := x.check.Sum(nil)
	if x.ckLen > 0 {
		if _, ok := x.check.(hash.Hash64); ok || x.ckLen == 4 {
			// CRC32 and CRC64 are stored little-endian
			for i, j := 0, len(sum)-1; i < j; i, j = i+1, j-1 {
				sum[i], sum[j] = sum[j], sum[i]
			}
		}
		if !bytes.Equal(sum, ck) {
			return errXzCorrupt
		}
	}
	x.records = append(x.records, xzRecord{uint64(x.hdrLen + csize + int64(x.ckLen)), uint64(x.out)})
	return nil
}

// index reads a stream's index (its indicator byte already read) and the
// stream footer after it, and holds both to the blocks seen.
func (x *xzReader) index() error {
	crc := crc32.NewIEEE()
	crc.Write([]byte{0})
	size := int64(1)
	readVLI := func() (uint64, error) {
		var buf [9]byte
		for i := range buf {
			b, err := x.cr.ReadByte()
			if err != nil {
				return 0, errXzEOF
			}
			buf[i] = b
			crc.Write(buf[i : i+1])
			size++
			if b&0x80 == 0 {
				v, _, ok := vli(buf[:i+1])
				if !ok {
					return 0, errXzCorrupt
				}
				return v, nil
			}
		}
		return 0, errXzCorrupt
	}
	count, err := readVLI()
	if err != nil {
		return err
	}
	if count != uint64(len(x.records)) {
		return errXzCorrupt
	}
	for _, r := range x.records {
		u, err := readVLI()
		if err != nil {
			return err
		}
		c, err := readVLI()
		if err != nil {
			return err
		}
		if u != r.unpadded || c != r.uncompressed {
			return errXzCorrupt
		}
	}
	pad := make([]byte, (4-size%4)%4)
	if err := x.full(pad); err != nil {
		return err
	}
	for _, b := range pad {
		if b != 0 {
			return errXzCorrupt
		}
	}
	crc.Write(pad)
	size += int64(len(pad))
	var tail [4 + 12]byte
	if err := x.full(tail[:]); err != nil {
		return err
	}
	if binary.LittleEndian.Uint32(tail[:4]) != crc.Sum32() {
		return errXzCorrupt
	}
	f := tail[4:]
	if crc32.ChecksumIEEE(f[4:10]) != binary.LittleEndian.Uint32(f[:4]) ||
		int64(binary.LittleEndian.Uint32(f[4:8])+1)*4 != size+4 || // the index with its CRC
		f[8] != x.flags[0] || f[9] != x.flags[1] || f[10] != 'Y' || f[11] != 'Z' {
		return errXzCorrupt
	}
	return nil
}

// nopHash is the check of a stream that has none.
type nopHash struct{}

func (nopHash) Write(p []byte) (int, error) { return len(p), nil }
func (nopHash) Sum(b []byte) []byte         { return b }
func (nopHash) Reset()                      {}
func (nopHash) Size() int                   { return 0 }
func (nopHash) BlockSize() int              { return 1 }
