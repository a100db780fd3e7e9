package main

import (
	"cmp"
	"io"

	"github.com/schollz/progressbar/v3"
)

// barProgress draws a byte progress bar on a terminal.
type barProgress struct {
	w     io.Writer
	label string // default "ingesting"
	bar   *progressbar.ProgressBar
}

func (p *barProgress) Start(total int64, files int) {
	if total <= 0 {
		return
	}
	p.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(cmp.Or(p.label, "ingesting")),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	)
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
