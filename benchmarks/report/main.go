// Command report turns the runs of benchmarks/run.sh into a Markdown report and a PNG chart: medians
// per command and server with their ranges over the runs, HotKV/Redis ratios, server CPU-seconds per
// million requests, latency percentiles, RSS and each server's scheduling policy, and the memory
// tables of the memory, growing-data and small-collections sections. See benchmarks/README.md.
//
// Exit status: 0, 1 when it cannot read its input or write the report, 3 when the report is written
// but a run or a load failed (they are listed on stderr): the harness fails with it.
//
//	report -manifest runs.tsv -meta meta.txt -memory memory.tsv -growing growing.tsv -smallcoll smallcoll.tsv \
//	    -md results/2026-01-01-box.md -png results/2026-01-01-box.png
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	manifest := flag.String("manifest", "", "run.sh's manifest (one tab-separated line per run)")
	metaPath := flag.String("meta", "", "run.sh's key=value metadata")
	md := flag.String("md", "", "Markdown output (default stdout)")
	png := flag.String("png", "", "PNG chart of the throughput section (none if empty); other sections' charts get -<section> before .png")
	var t tables
	flag.StringVar(&t.memory, "memory", "", "run.sh's memory table (none if empty)")
	flag.StringVar(&t.growing, "growing", "", "run.sh's growing-data memory table (none if empty)")
	flag.StringVar(&t.smallcoll, "smallcoll", "", "run.sh's small-collections table (none if empty)")
	flag.Parse()
	failed, err := build(*manifest, *metaPath, t, *md, *png)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	if len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "report: %d run(s) or load(s) failed:\n", len(failed))
		for _, f := range failed {
			fmt.Fprintln(os.Stderr, "  "+f)
		}
		os.Exit(3)
	}
}

// tables are the paths of run.sh's tables besides the manifest; an empty path means none.
type tables struct{ memory, growing, smallcoll string }

// input is everything the report is made of.
type input struct {
	runs  []run
	mem   []memRow
	grow  []growRow
	small []smallRow
	meta  map[string]string
}

// build writes the report and returns the runs and loads that failed, one line each.
func build(manifest, metaPath string, t tables, md, png string) ([]string, error) {
	var in input
	var err error
	if in.runs, err = readManifest(manifest); err != nil {
		return nil, err
	}
	if in.meta, err = readMeta(metaPath); err != nil {
		return nil, err
	}
	if in.mem, err = readMemory(t.memory); err != nil {
		return nil, err
	}
	if in.grow, err = readGrowing(t.growing); err != nil {
		return nil, err
	}
	if in.small, err = readSmall(t.smallcoll); err != nil {
		return nil, err
	}
	charts, err := writeCharts(png, in.runs)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	writeMarkdown(&buf, in, charts)
	if md == "" {
		_, err = os.Stdout.Write(buf.Bytes())
		return failures(in), err
	}
	if err := os.WriteFile(md, buf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("cannot write the report: %w", err)
	}
	os.Stdout.Write(buf.Bytes())
	return failures(in), nil
}

// writeCharts draws every section that has a chart: the throughput section into png, another
// section into png's name with -<section> before the extension. It returns the file names drawn.
func writeCharts(png string, runs []run) (map[string]string, error) {
	charts := map[string]string{}
	if png == "" {
		return charts, nil
	}
	for _, sec := range sections {
		if sec.chart == "" {
			continue
		}
		path := png
		if sec.name != "throughput" {
			ext := filepath.Ext(png)
			path = strings.TrimSuffix(png, ext) + "-" + sec.name + ext
		}
		drawn, err := writeChart(path, runs, sec)
		if err != nil {
			return nil, err
		}
		if drawn {
			charts[sec.name] = filepath.Base(path)
		}
	}
	return charts, nil
}
