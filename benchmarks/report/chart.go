package main

import (
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// writeChart draws a section as bars per command: the candidate's ops/s over the baseline's, and
// the baseline's CPU per request over the candidate's (above 1, HotKV does the same work with less
// CPU). A failed command has no bar. It reports false when there is nothing to draw.
func writeChart(path string, runs []run, sec section) (bool, error) {
	cmds := commands(runs, sec.name)
	if len(cmds) == 0 {
		return false, nil
	}
	all := summarize(runs)
	speed, thrift := make(plotter.Values, len(cmds)), make(plotter.Values, len(cmds))
	for i, cmd := range cmds {
		r, h := all[key{sec.name, cmd, sec.a.server}], all[key{sec.name, cmd, sec.b.server}]
		if r.ok() && h.ok() && r.opsPerSec > 0 {
			speed[i] = h.opsPerSec / r.opsPerSec
			if r.cpuPerM > 0 && h.cpuPerM > 0 {
				thrift[i] = r.cpuPerM / h.cpuPerM
			}
		}
	}
	p := plot.New()
	p.Title.Text = sec.chart
	p.Y.Label.Text = "ratio"
	w := vg.Points(12)
	a, err := plotter.NewBarChart(speed, w)
	if err != nil {
		return false, fmt.Errorf("cannot chart: %w", err)
	}
	a.Color, a.Offset = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, -w/2
	b, err := plotter.NewBarChart(thrift, w)
	if err != nil {
		return false, fmt.Errorf("cannot chart: %w", err)
	}
	b.Color, b.Offset = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, w/2
	even := plotter.NewFunction(func(float64) float64 { return 1 })
	even.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	p.Add(a, b, even)
	p.Legend.Add("throughput: HotKV ops/s / Redis ops/s", a)
	p.Legend.Add("CPU efficiency: Redis CPU / HotKV CPU per request", b)
	p.Legend.Top = true
	p.NominalX(cmds...)
	// Headroom above the tallest bar keeps the legend off the bars.
	p.Y.Min, p.Y.Max = 0, 1.4*max(1, slices.Max(speed), slices.Max(thrift))
	width := max(160, 40+18*len(cmds))
	if err := p.Save(vg.Length(width)*vg.Millimeter, 100*vg.Millimeter, path); err != nil {
		return false, fmt.Errorf("cannot write the chart: %w", err)
	}
	return true, nil
}
