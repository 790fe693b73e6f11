package wlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// Version is the on-disk format version of segments (docs/format.md).
const Version = 1

const (
	segMagic      = "WLOG"
	recMagic      = "WREC"
	segHeaderSize = 24
	recHeaderSize = 48
	segExt        = ".wlog"

	// MaxSandboxID bounds a record's sandbox name.
	MaxSandboxID = 1024
	// maxPayloadFormat bounds a payload a reader accepts, whatever the
	// writer's Options.MaxPayload, so a corrupt length never makes
	// Replay allocate without limit.
	maxPayloadFormat = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Record is one entry of the log.
type Record struct {
	Sandbox string // the sandbox's id
	Epoch   uint64 // the owner epoch the writer held
	BaseGen uint64 // the committed generation the change applies on top of
	Seq     uint64 // per sandbox, strictly increasing in log order
	Payload []byte // opaque: the net change of one exec or file call
}

func segName(n uint64) string { return fmt.Sprintf("%016x%s", n, segExt) }

func parseSegName(name string) (uint64, bool) {
	h, ok := strings.CutSuffix(name, segExt)
	if !ok || len(h) != 16 {
		return 0, false
	}
	n, err := strconv.ParseUint(h, 16, 64)
	return n, err == nil
}

// appendSegHeader appends a segment header: magic, version, segment
// number, reserved, CRC-32C of the 20 bytes before it.
func appendSegHeader(b []byte, n uint64) []byte {
	start := len(b)
	b = append(b, segMagic...)
	b = binary.LittleEndian.AppendUint32(b, Version)
	b = binary.LittleEndian.AppendUint64(b, n)
	b = binary.LittleEndian.AppendUint32(b, 0)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// checkSegHeader says what is wrong with a segment header, if anything.
// torn reports a header that is not one at all (a crash while creating
// the segment) as opposed to one of another version.
func checkSegHeader(h []byte, n uint64) (torn bool, err error) {
	if len(h) < segHeaderSize || string(h[:4]) != segMagic ||
		binary.LittleEndian.Uint32(h[20:]) != crc32.Checksum(h[:20], castagnoli) {
		return true, fmt.Errorf("bad segment header")
	}
	if v := binary.LittleEndian.Uint32(h[4:]); v != Version {
		return false, fmt.Errorf("format version %d, this build reads %d", v, Version)
	}
	if got := binary.LittleEndian.Uint64(h[8:]); got != n {
		return false, fmt.Errorf("header names segment %d", got)
	}
	return false, nil
}

// recordSize is the encoded size of r.
func recordSize(r *Record) int { return recHeaderSize + len(r.Sandbox) + len(r.Payload) }

// appendRecord appends r's encoding (docs/format.md, "Record"). batch is
// the segment offset where the write holding r begins.
func appendRecord(b []byte, r *Record, batch int64) []byte {
	start := len(b)
	b = append(b, recMagic...)
	b = append(b, 0, 0, 0, 0) // CRC, filled in below
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Payload)))
	b = binary.LittleEndian.AppendUint16(b, 0) // kind: 0 = change
	b = binary.LittleEndian.AppendUint16(b, uint16(len(r.Sandbox)))
	b = binary.LittleEndian.AppendUint64(b, r.Epoch)
	b = binary.LittleEndian.AppendUint64(b, r.BaseGen)
	b = binary.LittleEndian.AppendUint64(b, r.Seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(batch))
	b = append(b, r.Sandbox...)
	b = append(b, r.Payload...)
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(b[start+8:], castagnoli))
	return b
}

// recHeader is a decoded record header.
type recHeader struct {
	crc        uint32
	payload    int
	sandbox    int
	epoch, gen uint64
	seq        uint64
	batch      int64
}

func (h recHeader) size() int64 { return int64(recHeaderSize + h.sandbox + h.payload) }

// parseHeader decodes the fixed part of a record, or says why it is not
// one.
func parseHeader(b []byte) (recHeader, error) {
	var h recHeader
	if len(b) < recHeaderSize {
		return h, fmt.Errorf("partial record header (%d of %d bytes)", len(b), recHeaderSize)
	}
	if string(b[:4]) != recMagic {
		return h, fmt.Errorf("no record magic")
	}
	h.crc = binary.LittleEndian.Uint32(b[4:])
	h.payload = int(binary.LittleEndian.Uint32(b[8:]))
	if kind := binary.LittleEndian.Uint16(b[12:]); kind != 0 {
		return h, fmt.Errorf("unknown record kind %d", kind)
	}
	h.sandbox = int(binary.LittleEndian.Uint16(b[14:]))
	h.epoch = binary.LittleEndian.Uint64(b[16:])
	h.gen = binary.LittleEndian.Uint64(b[24:])
	h.seq = binary.LittleEndian.Uint64(b[32:])
	h.batch = int64(binary.LittleEndian.Uint64(b[40:]))
	if h.sandbox == 0 || h.sandbox > MaxSandboxID {
		return h, fmt.Errorf("sandbox id length %d", h.sandbox)
	}
	if h.payload > maxPayloadFormat {
		return h, fmt.Errorf("payload length %d", h.payload)
	}
	return h, nil
}

// parseRecord decodes a whole record (header included) whose header is h.
func parseRecord(h recHeader, b []byte) (Record, error) {
	if crc32.Checksum(b[8:], castagnoli) != h.crc {
		return Record{}, fmt.Errorf("checksum mismatch")
	}
	body := b[recHeaderSize:]
	return Record{
		Sandbox: string(body[:h.sandbox]),
		Epoch:   h.epoch, BaseGen: h.gen, Seq: h.seq,
		Payload: body[h.sandbox:],
	}, nil
}
