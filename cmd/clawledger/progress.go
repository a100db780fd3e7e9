package main

import (
	"io"

	"github.com/schollz/progressbar/v3"
)

// barProgress draws a progress bar on a terminal: of bytes, or of lines
// when counting lines.
type barProgress struct {
	w           io.Writer
	description string
	lines       bool // count lines, not bytes
	bar         *progressbar.ProgressBar
}

func (p *barProgress) Start(total int64) {
	if total <= 0 {
		return
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(p.description),
		progressbar.OptionShowBytes(!p.lines),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	}
	if p.lines {
		opts = append(opts, progressbar.OptionShowCount())
	}
	p.bar = progressbar.NewOptions64(total, opts...)
}

func (p *barProgress) Add(n int64) {
	if p.bar != nil {
		_ = p.bar.Add64(n)
	}
}

func (p *barProgress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
