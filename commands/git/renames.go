package git

import (
	"bytes"
	"fmt"
	"path"
	"sort"
)

// Rename detection as git's diffcore-rename does it by default (diff,
// log, show, commit and format-patch summaries): a deleted file and an
// added file are one rename when their contents are identical, or when
// the added file's bytes are at least half from the deleted one by git's
// similarity estimate (diffcore-delta: the content cut in runs of up to 64
// bytes ending at a newline, each run hashed; the bytes of runs the two
// files share, over the larger size).

const (
	maxScore = 60000 // git's MAX_SCORE
	minScore = 30000 // git's default -M50%
	// renameLimit is git's diff.renameLimit: beyond sources x destinations
	// past its square only exact renames are found
	renameLimit = 1000
)

// similarity is a rename's score in percent, as git prints it.
func (ch *fileChange) similarity() int { return ch.score * 100 / maxScore }

// findRenames pairs the deletions and additions of changes (sorted by
// path) into renames, each at its destination's place in the list.
func (s *session) findRenames(changes []*fileChange) ([]*fileChange, error) {
	var srcs, dsts []int
	for i, ch := range changes {
		switch {
		case ch.to == nil:
			srcs = append(srcs, i)
		case ch.from == nil:
			dsts = append(dsts, i)
		}
	}
	if len(srcs) == 0 || len(dsts) == 0 {
		return changes, nil
	}
	srcOf := map[int]int{} // destination index -> source index
	score := map[int]int{} // destination index -> score
	usedSrc := map[int]bool{}
	// exact renames first, preferring a source of the same base name
	byHash := map[string][]int{}
	for _, si := range srcs {
		k := changes[si].from.hash.String()
		byHash[k] = append(byHash[k], si)
	}
	for _, di := range dsts {
		cands := byHash[changes[di].to.hash.String()]
		best := -1
		for _, si := range cands {
			if usedSrc[si] {
				continue
			}
			if best < 0 || sameBase(changes[si].from.name, changes[di].to.name) && !sameBase(changes[best].from.name, changes[di].to.name) {
				best = si
			}
		}
		if best >= 0 {
			srcOf[di], score[di], usedSrc[best] = best, maxScore, true
		}
	}
	var restSrc, restDst []int
	for _, si := range srcs {
		if !usedSrc[si] && changes[si].from.mode.IsRegular() {
			restSrc = append(restSrc, si)
		}
	}
	for _, di := range dsts {
		if _, ok := srcOf[di]; !ok && changes[di].to.mode.IsRegular() {
			restDst = append(restDst, di)
		}
	}
	if len(restSrc) > 0 && len(restDst) > 0 && len(restSrc)*len(restDst) <= renameLimit*renameLimit {
		if err := s.inexactRenames(changes, restSrc, restDst, srcOf, score); err != nil {
			return nil, err
		}
	}
	if len(srcOf) == 0 {
		return changes, nil
	}
	paired := map[int]bool{}
	for _, si := range srcOf {
		paired[si] = true
	}
	out := make([]*fileChange, 0, len(changes)-len(srcOf))
	for i, ch := range changes {
		if paired[i] {
			continue
		}
		if si, ok := srcOf[i]; ok {
			ch = &fileChange{from: changes[si].from, to: ch.to, score: score[i]}
		}
		out = append(out, ch)
	}
	return out, nil
}

func sameBase(a, b string) bool { return path.Base(a) == path.Base(b) }

// renameCand is a possible inexact rename.
type renameCand struct {
	src, dst, score int
	sameName        bool
}

// inexactRenames scores every remaining pair and takes the best first, as
// git does (each destination keeps its four best sources).
func (s *session) inexactRenames(changes []*fileChange, srcs, dsts []int, srcOf, score map[int]int) error {
	type content struct {
		size  int
		spans map[uint32]int
	}
	cache := map[int]*content{}
	get := func(i int, sd *side) (*content, error) {
		if c, ok := cache[i]; ok {
			return c, nil
		}
		data, err := sd.load()
		if err != nil {
			return nil, err
		}
		spans := spanHashes(data)
		// the span table is held while pairs are scored
		if err := s.res.Grow(int64(len(spans)) * 16); err != nil {
			return nil, err
		}
		c := &content{len(data), spans}
		cache[i] = c
		return c, nil
	}
	var cands []renameCand
	for _, di := range dsts {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		dc, err := get(di, changes[di].to)
		if err != nil {
			return err
		}
		var mine []renameCand
		for _, si := range srcs {
			sc, err := get(si, changes[si].from)
			if err != nil {
				return err
			}
			maxSize, baseSize := max(sc.size, dc.size), min(sc.size, dc.size)
			// git does not consider a change of size this drastic
			if maxSize == 0 || maxSize*(maxScore-minScore) < (maxSize-baseSize)*maxScore {
				continue
			}
			copied := 0
			for h, n := range sc.spans {
				copied += min(n, dc.spans[h])
			}
			v := int(int64(copied) * maxScore / int64(maxSize))
			if v < minScore {
				continue
			}
			mine = append(mine, renameCand{si, di, v, sameBase(changes[si].from.name, changes[di].to.name)})
		}
		sort.SliceStable(mine, func(a, b int) bool { return better(mine[a], mine[b]) })
		if len(mine) > 4 {
			mine = mine[:4]
		}
		cands = append(cands, mine...)
	}
	sort.SliceStable(cands, func(a, b int) bool { return better(cands[a], cands[b]) })
	usedSrc := map[int]bool{}
	for _, c := range cands {
		if _, done := srcOf[c.dst]; done || usedSrc[c.src] {
			continue
		}
		srcOf[c.dst], score[c.dst], usedSrc[c.src] = c.src, c.score, true
	}
	return nil
}

func better(a, b renameCand) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.sameName && !b.sameName
}

// spanHashes cuts data as git's diffcore-delta does and sums the bytes of
// the runs by hash. A CR before a LF is not counted in text.
func spanHashes(data []byte) map[uint32]int {
	const hashBase = 107927
	text := bytes.IndexByte(data[:min(len(data), 8000)], 0) < 0
	spans := map[uint32]int{}
	var a1, a2 uint32
	n := 0
	for i := 0; i < len(data); i++ {
		c := uint32(data[i])
		if text && c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			continue
		}
		old := a1
		a1 = (a1 << 7) ^ (a2 >> 25)
		a2 = (a2 << 7) ^ (old >> 25)
		a1 += c
		n++
		if n < 64 && c != '\n' {
			continue
		}
		spans[(a1+a2*0x61)%hashBase] += n
		n, a1, a2 = 0, 0, 0
	}
	if n > 0 {
		spans[(a1+a2*0x61)%hashBase] += n
	}
	return spans
}

// writeSummary prints the create, delete, rename and mode lines of a
// diffstat summary (commit, format-patch).
func writeSummary(w *bytes.Buffer, changes []*fileChange) {
	for _, ch := range changes {
		switch {
		case ch.from == nil:
			fmt.Fprintf(w, " create mode %s %s\n", modeOf(ch.to.mode), ch.to.name)
		case ch.to == nil:
			fmt.Fprintf(w, " delete mode %s %s\n", modeOf(ch.from.mode), ch.from.name)
		case ch.score > 0:
			fmt.Fprintf(w, " rename %s (%d%%)\n", renameName(ch.from.name, ch.to.name), ch.similarity())
			if ch.from.mode != ch.to.mode {
				fmt.Fprintf(w, " mode change %s => %s\n", modeOf(ch.from.mode), modeOf(ch.to.mode))
			}
		case ch.from.mode != ch.to.mode:
			fmt.Fprintf(w, " mode change %s => %s %s\n", modeOf(ch.from.mode), modeOf(ch.to.mode), ch.to.name)
		}
	}
}
