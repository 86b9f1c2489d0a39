package config

import (
	"strconv"
	"strings"
)

// Client classes of client-output-buffer-limit, in Redis's order.
const (
	ClassNormal = iota
	ClassReplica
	ClassPubsub
	numClasses
)

// BufferLimit is one client class's output buffer limit: a client is closed
// when its pending output passes Hard bytes, or stays above Soft bytes for
// Seconds seconds. Zero disables a limit.
type BufferLimit struct {
	Hard, Soft uint64
	Seconds    int
}

var (
	classNames    = [numClasses]string{"normal", "slave", "pubsub"}
	defaultLimits = [numClasses]BufferLimit{{}, {256 << 20, 64 << 20, 60}, {32 << 20, 8 << 20, 60}}
)

// classByName is Redis's getClientTypeByName; master is a class there but
// has no output limit of its own.
func classByName(s string) int {
	switch asciiLower(s) {
	case "normal":
		return ClassNormal
	case "slave", "replica":
		return ClassReplica
	case "pubsub":
		return ClassPubsub
	}
	return -1
}

// client-output-buffer-limit: groups of <class> <hard> <soft> <seconds>;
// classes not named keep their limits. All groups are checked before any
// is applied.
var obufSpecial = &special{
	set: func(_ *setCtx, cur value, args []string) (value, string) {
		if len(args)%4 != 0 {
			return value{}, "Wrong number of arguments in buffer limit configuration."
		}
		limits := parseLimits(cur.s)
		for j := 0; j < len(args); j += 4 {
			class := classByName(args[j])
			if class < 0 {
				return value{}, "Invalid client class specified in buffer limit configuration."
			}
			hard, ok1 := memToULL(args[j+1])
			soft, ok2 := memToULL(args[j+2])
			secs, end, _ := strtoll(args[j+3], 10)
			s := int32(secs) // Redis keeps the seconds in a C int
			if !ok1 || !ok2 || !end || s < 0 {
				return value{}, "Error in hard, soft or soft_seconds setting in buffer limit configuration."
			}
			limits[class] = BufferLimit{Hard: hard, Soft: soft, Seconds: int(s)}
		}
		return value{s: formatLimits(limits)}, ""
	},
	get: getS,
	rewrite: func(rw *rewriter, name string, v value) {
		for class, l := range parseLimits(v.s) {
			cname := classNames[class]
			if class == ClassReplica {
				cname = "replica"
			}
			line := name + " " + cname + " " + formatMemory(int64(l.Hard)) + " " +
				formatMemory(int64(l.Soft)) + " " + strconv.Itoa(l.Seconds)
			rw.rewriteLine(name, line, l != defaultLimits[class])
		}
	},
}

func formatLimits(limits [numClasses]BufferLimit) string {
	parts := make([]string, 0, 4*numClasses)
	for class, l := range limits {
		parts = append(parts, classNames[class], strconv.FormatUint(l.Hard, 10),
			strconv.FormatUint(l.Soft, 10), strconv.Itoa(l.Seconds))
	}
	return strings.Join(parts, " ")
}

// parseLimits reads back what formatLimits wrote.
func parseLimits(s string) [numClasses]BufferLimit {
	var limits [numClasses]BufferLimit
	f := strings.Fields(s)
	for j := 0; j+3 < len(f); j += 4 {
		class := classByName(f[j])
		if class < 0 {
			continue
		}
		hard, _ := strconv.ParseUint(f[j+1], 10, 64)
		soft, _ := strconv.ParseUint(f[j+2], 10, 64)
		secs, _ := strconv.Atoi(f[j+3])
		limits[class] = BufferLimit{Hard: hard, Soft: soft, Seconds: secs}
	}
	return limits
}

var defaultOOMValues = [3]int{0, 200, 800}

// oom-score-adj-values: the OOM score adjustments for master, replica and
// background child. Stored only; HotKV forks no children.
var oomValuesSpecial = &special{
	set: func(_ *setCtx, _ value, args []string) (value, string) {
		if len(args) != 3 {
			return value{}, "wrong number of arguments"
		}
		vals := make([]int, len(args))
		for i, a := range args {
			v, end, _ := strtoll(a, 10) // "" reads as 0, as in C
			if !end || v < -2000 || v > 2000 {
				return value{}, "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
			}
			vals[i] = int(v)
		}
		return value{s: formatInts(vals)}, ""
	},
	get: getS,
	rewrite: func(rw *rewriter, name string, v value) {
		vals := parseInts(v.s)
		force := len(vals) != len(defaultOOMValues)
		for i := 0; !force && i < len(vals); i++ {
			force = vals[i] != defaultOOMValues[i]
		}
		rw.rewriteLine(name, name+" "+v.s, force)
	},
}

// parseInts reads space-separated integers already validated by strtoll.
func parseInts(s string) []int {
	var out []int
	for _, f := range strings.Fields(s) {
		v, _, _ := strtoll(f, 10)
		out = append(out, int(v))
	}
	return out
}

func formatInts(vals []int) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, " ")
}

// latency-tracking-info-percentiles: the percentiles INFO latencystats
// reports, each in [0, 100]; `""` reports none.
var percentilesSpecial = &special{
	set: func(_ *setCtx, _ value, args []string) (value, string) {
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		parts := make([]string, len(args))
		for i, a := range args {
			f, ok := parseFloat(a)
			if !ok {
				return value{}, "Invalid latency-tracking-info-percentiles parameters"
			}
			if f > 100 || f < 0 {
				return value{}, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
			}
			parts[i] = formatPercentile(f)
		}
		return value{s: strings.Join(parts, " ")}, ""
	},
	get: getS,
	rewrite: func(rw *rewriter, name string, v value) {
		if v.s == "" {
			rw.rewriteLine(name, name+` ""`, true)
			return
		}
		rw.rewriteLine(name, name+" "+v.s, true)
	},
}

// formatPercentile is C's "%f" with trailing zeros (and a bare point)
// trimmed, as Redis prints percentiles.
func formatPercentile(f float64) string {
	s := strconv.FormatFloat(f, 'f', 6, 64)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// parsePercentiles reads back what the setter stored.
func parsePercentiles(s string) []float64 {
	var out []float64
	for _, f := range strings.Fields(s) {
		v, _ := strconv.ParseFloat(f, 64)
		out = append(out, v)
	}
	return out
}
