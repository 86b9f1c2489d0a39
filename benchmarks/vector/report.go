package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func report(args []string) error {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	work := fs.String("work", "", "work directory holding hotkv.json and hnswlib.json")
	out := fs.String("out", "", "output prefix (PREFIX.md, PREFIX.svg)")
	note := fs.String("note", "", "a line about the run (machine, load) for the header")
	fs.Parse(args)
	var rs []Result
	for _, f := range []string{"hotkv.json", "hnswlib.json"} {
		b, err := os.ReadFile(filepath.Join(*work, f))
		if err != nil {
			return err
		}
		var part []Result
		if err := json.Unmarshal(b, &part); err != nil {
			return fmt.Errorf("cannot read %s: %w", f, err)
		}
		rs = append(rs, part...)
	}
	var md strings.Builder
	writeTables(&md, rs, *note, filepath.Base(*out)+".svg")
	if err := os.WriteFile(*out+".md", []byte(md.String()), 0o644); err != nil {
		return err
	}
	return plotSweep(rs, *out+".svg")
}

func label(r Result) string { return r.Engine + " " + r.Metric + " " + r.Quant }

// qpsAt interpolates QPS at recall target along the sweep (log QPS, linear recall); 0 if never reached.
func qpsAt(r Result, target float64) float64 {
	for i, p := range r.Sweep {
		if p.Recall >= target {
			if i == 0 {
				return p.QPS
			}
			a := r.Sweep[i-1]
			t := (target - a.Recall) / (p.Recall - a.Recall)
			return math.Exp(math.Log(a.QPS) + t*(math.Log(p.QPS)-math.Log(a.QPS)))
		}
	}
	return 0
}

func at(r Result, ef int) Point {
	for _, p := range r.Sweep {
		if p.EF == ef {
			return p
		}
	}
	return Point{}
}

func find(rs []Result, engine, metric, quant string) (Result, bool) {
	for _, r := range rs {
		if r.Engine == engine && r.Metric == metric && r.Quant == quant {
			return r, true
		}
	}
	return Result{}, false
}

func writeTables(w *strings.Builder, rs []Result, note, svg string) {
	fmt.Fprintf(w, "# HNSW recall and speed: HotKV ds/vector beside hnswlib on Fashion-MNIST\n\n")
	if len(rs) > 0 {
		fmt.Fprintf(w, "%d base vectors, %d queries, 784 dimensions, k 10, M 16, build EF 200, one thread unless said. ", rs[0].N, rs[0].Queries)
	}
	fmt.Fprintf(w, "Recall@10 against the exact scan (HotKV's SearchExact on FP32; hnswlib.BFIndex agreement below). "+
		"Cosine runs on normalized vectors, L2 on raw pixels. %s\n\n", note)
	fmt.Fprintf(w, "![recall vs QPS](%s)\n\n", svg)
	fmt.Fprintf(w, "## Recall@10 / single-thread QPS by search EF\n\n| engine | metric | quant |")
	for _, ef := range efs {
		fmt.Fprintf(w, " EF %d |", ef)
	}
	fmt.Fprintf(w, "\n|---|---|---|%s\n", strings.Repeat("---:|", len(efs)))
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %s | %s |", r.Engine, r.Metric, r.Quant)
		for _, ef := range efs {
			p := at(r, ef)
			fmt.Fprintf(w, " %.4f / %.0f |", p.Recall, p.QPS)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n## Build, deletion, threads, memory\n\n")
	fmt.Fprintf(w, "| engine | metric | quant | inserts/s | QPS at recall 0.95 | recall after deleting 30%% (EF 100) | deletes/s | QPS 1 thread | 2 threads | speed-up (EF) | bytes/element |\n")
	fmt.Fprintf(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		mem := "-"
		if r.BytesPerElement > 0 {
			mem = fmt.Sprintf("%.0f", r.BytesPerElement)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.0f | %.0f | %.4f | %.0f | %.0f | %.0f | %.2fx (%d) | %s |\n", r.Engine, r.Metric, r.Quant,
			r.InsertPerSec, qpsAt(r, 0.95), r.RecallAfterDelete, r.DeletePerSec, r.QPS1, r.QPS2, r.QPS2/r.QPS1, r.SpeedupEF, mem)
	}
	for _, r := range rs {
		if r.ExactRecall > 0 {
			fmt.Fprintf(w, "\nHotKV %s %s: its exact scan over the stored vectors reaches recall@10 %.4f of the FP32 truth (1,000 queries): no search EF can pass that.\n", r.Metric, r.Quant, r.ExactRecall)
		}
	}
	fmt.Fprintf(w, "\nhnswlib's deletion is mark_deleted (the node stays in the graph); HotKV's is real (relinked, slot freed).\n")
	for _, r := range rs {
		if r.TruthCheck != "" {
			fmt.Fprintf(w, "\nExact-scan check, %s: %s.\n", r.Metric, r.TruthCheck)
		}
	}
	fmt.Fprintf(w, "\n## Targets (issue 20)\n\n| target | metric | measured | met |\n|---|---|---|---|\n")
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "**no**"
	}
	for _, m := range []string{"cosine", "l2"} {
		h, okH := find(rs, "hnswlib", m, "noquant")
		for _, q := range []string{"noquant", "q8"} {
			r, ok := find(rs, "hotkv", m, q)
			if !ok {
				continue
			}
			fmt.Fprintf(w, "| recall@10 >= 0.95 at EF 100, %s | %s | %.4f | %s |\n", q, m, at(r, 100).Recall, yes(at(r, 100).Recall >= 0.95))
			fmt.Fprintf(w, "| recall@10 >= 0.99 at EF 400, %s | %s | %.4f | %s |\n", q, m, at(r, 400).Recall, yes(at(r, 400).Recall >= 0.99))
			if okH {
				a, b := qpsAt(r, 0.95), qpsAt(h, 0.95)
				fmt.Fprintf(w, "| QPS at recall 0.95 >= hnswlib's, %s | %s | %.0f vs %.0f (%.2fx) | %s |\n", q, m, a, b, a/b, yes(a >= b))
				fmt.Fprintf(w, "| inserts/s >= hnswlib's, %s | %s | %.0f vs %.0f (%.2fx) | %s |\n", q, m, r.InsertPerSec, h.InsertPerSec, r.InsertPerSec/h.InsertPerSec, yes(r.InsertPerSec >= h.InsertPerSec))
			}
			fmt.Fprintf(w, "| recall >= 0.95 on survivors of 30%% deletion, %s | %s | %.4f | %s |\n", q, m, r.RecallAfterDelete, yes(r.RecallAfterDelete >= 0.95))
			fmt.Fprintf(w, "| two threads >= 1.8x one, %s | %s | %.2fx | %s |\n", q, m, r.QPS2/r.QPS1, yes(r.QPS2/r.QPS1 >= 1.8))
		}
		fq, ok1 := find(rs, "hotkv", m, "noquant")
		q8, ok2 := find(rs, "hotkv", m, "q8")
		if ok1 && ok2 {
			worst := 0.0
			for _, ef := range efs {
				worst = math.Max(worst, at(fq, ef).Recall-at(q8, ef).Recall)
			}
			fmt.Fprintf(w, "| Q8 within 0.02 recall of NOQUANT (worst EF) | %s | %.4f (Q8's own exact scan: %.4f) | %s |\n", m, worst, q8.ExactRecall, yes(worst <= 0.02))
		}
	}
}

func plotSweep(rs []Result, path string) error {
	p := plot.New()
	p.Title.Text = "Fashion-MNIST: recall@10 vs single-thread QPS (EF 10-400)"
	p.X.Label.Text = "recall@10"
	p.Y.Label.Text = "queries per second (log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = false
	p.Legend.Left = true
	palette := []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {23, 190, 207, 255}}
	for i, r := range rs {
		if r.Quant == "bin" {
			continue // recall far left of the others; in the table
		}
		pts := make(plotter.XYs, len(r.Sweep))
		for j, s := range r.Sweep {
			pts[j].X, pts[j].Y = s.Recall, s.QPS
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		c := palette[i%len(palette)]
		l.Color, sc.Color = c, c
		if r.Engine == "hnswlib" {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			sc.Shape = draw.BoxGlyph{}
		}
		p.Add(l, sc)
		p.Legend.Add(label(r), l, sc)
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
