package rdbcheck

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// ProgressMin is the file size from which the tools show progress (64 MB).
const ProgressMin = 64 << 20

// Progress draws a check's progress on w: a bar redrawn in place about 5
// times a second when w is a terminal, else one line every Every. Done ends
// the output with a summary line. It is called from the reading goroutine
// only, so it needs no lock.
type Progress struct {
	W        io.Writer
	Terminal bool
	Total    int64
	Every    time.Duration // between lines when not a terminal (default 3s)
	Now      func() time.Time

	start, last time.Time
	done        int64
}

// NewProgress returns a Progress for a file of total bytes on f, a terminal
// or not as f's mode says.
func NewProgress(f *os.File, total int64) *Progress {
	return &Progress{W: f, Terminal: IsTerminal(f), Total: total}
}

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *Progress) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Update records that done bytes have been read and draws when it is time.
func (p *Progress) Update(done int64) {
	now := p.now()
	if p.start.IsZero() {
		p.start, p.last = now, now
	}
	p.done = done
	every := p.Every
	if every == 0 {
		every = 3 * time.Second
	}
	if p.Terminal {
		every = 200 * time.Millisecond
	}
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	p.draw(now, false)
}

// Finish draws the final state on its own line.
func (p *Progress) Finish() {
	if p.start.IsZero() {
		return
	}
	p.draw(p.now(), true)
}

func (p *Progress) draw(now time.Time, final bool) {
	pct := 100.0
	if p.Total > 0 {
		pct = float64(p.done) * 100 / float64(p.Total)
	}
	secs := now.Sub(p.start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(p.done) / 1e6 / secs
	}
	text := fmt.Sprintf("%d/%d bytes %5.1f%% %.1f MB/s", p.done, p.Total, pct, rate)
	if !p.Terminal {
		fmt.Fprintf(p.W, "progress: %s\n", text)
		return
	}
	const width = 30
	fill := min(width, int(pct*width/100))
	end := ""
	if final {
		end = "\n"
	}
	fmt.Fprintf(p.W, "\r[%s%s] %s%s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), text, end)
}
