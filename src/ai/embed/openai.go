package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options tune the OpenAI embedder; zero fields take the defaults below.
type Options struct {
	Timeout     time.Duration // one HTTP request, connect to last byte (DefaultTimeout)
	MaxBatch    int           // texts in one request (DefaultMaxBatch)
	MaxInflight int           // concurrent requests to the endpoint (DefaultMaxInflight)
	CacheSize   int           // recent texts whose vectors are kept (DefaultCacheSize; <0: none)
	APIKey      string        // sent as "Authorization: Bearer KEY" when set
	Client      *http.Client  // nil: a client of its own
}

// The OpenAI embedder's defaults.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultMaxBatch    = 64
	DefaultMaxInflight = 4
	DefaultCacheSize   = 1024
	maxReplyBytes      = 64 << 20
	maxDim             = 65536
)

// ErrEndpoint is wrapped by every error of a call to the endpoint (timeout, HTTP status, bad
// reply), so that callers can tell them from their own.
var ErrEndpoint = errors.New("embedding endpoint")

// OpenAI calls an OpenAI-compatible /v1/embeddings endpoint. Concurrent Embed calls share
// requests: a call joins the queue, and whenever fewer than MaxInflight requests are out, the
// caller that finds work queued sends up to MaxBatch queued texts in one request and hands
// each waiter its vectors, so there are no goroutines of its own to stop. Safe for concurrent use.
type OpenAI struct {
	endpoint, model string
	opts            Options
	client          *http.Client
	dim             atomic.Int64

	mu       sync.Mutex
	queue    []*job
	inflight int
	cache    map[string][]float32
	order    []string // cache keys in insertion order; a ring once full
	next     int

	Requests atomic.Int64 // HTTP requests sent (tests and stats)
}

// job is one Embed call's texts still to be embedded.
type job struct {
	texts [][]byte
	out   [][]float32
	err   error
	done  chan struct{}
}

// NewOpenAI returns an embedder for the endpoint at rawURL ("http://host:port/v1" or the full
// ".../v1/embeddings") and model. dim 0 learns the dimension from the first reply.
func NewOpenAI(rawURL, model string, dim int, opts Options) (*OpenAI, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: URL must be http:// or https:// with a host", ErrSpec)
	}
	if model == "" {
		return nil, fmt.Errorf("%w: empty model", ErrSpec)
	}
	if dim < 0 || dim > maxDim {
		return nil, fmt.Errorf("%w: dimension out of range", ErrSpec)
	}
	if !strings.HasSuffix(u.Path, "/embeddings") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/embeddings"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.MaxInflight <= 0 {
		opts.MaxInflight = DefaultMaxInflight
	}
	if opts.CacheSize == 0 {
		opts.CacheSize = DefaultCacheSize
	}
	o := &OpenAI{endpoint: u.String(), model: model, opts: opts, client: opts.Client}
	if o.client == nil {
		o.client = &http.Client{}
	}
	o.dim.Store(int64(dim))
	if opts.CacheSize > 0 {
		o.cache = make(map[string][]float32)
	}
	return o, nil
}

// Dim implements Embedder.
func (o *OpenAI) Dim() int { return int(o.dim.Load()) }

// Name implements Embedder.
func (o *OpenAI) Name() string { return "openai " + o.endpoint + " " + o.model }

// Local implements Embedder: the OpenAI embedder does network I/O.
func (o *OpenAI) Local() bool { return false }

// Cached returns the vector of text if it is in the recent-texts cache, without I/O: a caller
// that may not do I/O (inside MULTI or a script) can still use a vector embedded before.
func (o *OpenAI) Cached(text []byte) ([]float32, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v, ok := o.cache[string(text)]
	if !ok {
		return nil, false
	}
	return append([]float32(nil), v...), true
}

// Embed implements Embedder. It waits for the endpoint (at most Timeout per request, or until
// ctx ends); texts found in the recent-texts cache cost no request.
func (o *OpenAI) Embed(ctx context.Context, texts [][]byte) ([][]float32, error) {
	out := make([][]float32, len(texts))
	j := &job{done: make(chan struct{})}
	var missing []int
	o.mu.Lock()
	for i, t := range texts {
		if v, ok := o.cache[string(t)]; ok {
			out[i] = append([]float32(nil), v...)
			continue
		}
		missing = append(missing, i)
		j.texts = append(j.texts, bytes.Clone(t))
	}
	if len(missing) == 0 {
		o.mu.Unlock()
		return out, nil
	}
	o.queue = append(o.queue, j)
	o.mu.Unlock()
	go o.pump() // the sender may go on with others' jobs after this one is done
	select {
	case <-j.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrEndpoint, ctx.Err())
	}
	if j.err != nil {
		return nil, j.err
	}
	for k, i := range missing {
		out[i] = j.out[k]
	}
	return out, nil
}

// pump sends queued jobs while a request slot is free; the calling goroutine does the sending.
func (o *OpenAI) pump() {
	for {
		o.mu.Lock()
		if len(o.queue) == 0 || o.inflight >= o.opts.MaxInflight {
			o.mu.Unlock()
			return
		}
		// Whole jobs, up to MaxBatch texts (a job bigger than that goes alone).
		n, texts := 0, 0
		for n < len(o.queue) && (n == 0 || texts+len(o.queue[n].texts) <= o.opts.MaxBatch) {
			texts += len(o.queue[n].texts)
			n++
		}
		jobs := append([]*job(nil), o.queue[:n]...)
		o.queue = append(o.queue[:0], o.queue[n:]...)
		o.inflight++
		o.mu.Unlock()
		o.send(jobs)
		o.mu.Lock()
		o.inflight--
		o.mu.Unlock()
	}
}

// send embeds jobs' texts in one request and completes the jobs.
func (o *OpenAI) send(jobs []*job) {
	var input [][]byte
	for _, j := range jobs {
		input = append(input, j.texts...)
	}
	vecs, err := o.request(input)
	if err == nil {
		o.remember(input, vecs)
	}
	k := 0
	for _, j := range jobs {
		if err != nil {
			j.err = err
		} else {
			j.out = vecs[k : k+len(j.texts)]
			k += len(j.texts)
		}
		close(j.done)
	}
}

// remember puts vectors into the recent-texts cache, evicting the oldest once it is full.
func (o *OpenAI) remember(texts [][]byte, vecs [][]float32) {
	if o.opts.CacheSize < 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, t := range texts {
		key := string(t)
		if _, ok := o.cache[key]; ok {
			continue
		}
		if len(o.order) < o.opts.CacheSize {
			o.order = append(o.order, key)
		} else {
			delete(o.cache, o.order[o.next])
			o.order[o.next] = key
			o.next = (o.next + 1) % len(o.order)
		}
		o.cache[key] = append([]float32(nil), vecs[i]...)
	}
}

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedReply struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     *int      `json:"index"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// request POSTs one batch and checks the reply: one vector per text, each of the dimension.
func (o *OpenAI) request(texts [][]byte) ([][]float32, error) {
	o.Requests.Add(1)
	in := embedRequest{Model: o.model, Input: make([]string, len(texts))}
	for i, t := range texts {
		in.Input[i] = string(t)
	}
	body, _ := json.Marshal(in)
	ctx, cancel := context.WithTimeout(context.Background(), o.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEndpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if o.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.opts.APIKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: no reply within %v", ErrEndpoint, o.opts.Timeout)
		}
		return nil, fmt.Errorf("%w: %w", ErrEndpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: no reply within %v", ErrEndpoint, o.opts.Timeout)
		}
		return nil, fmt.Errorf("%w: reading the reply: %w", ErrEndpoint, err)
	}
	if len(raw) > maxReplyBytes {
		return nil, fmt.Errorf("%w: reply larger than %d bytes", ErrEndpoint, maxReplyBytes)
	}
	var rep embedReply
	jerr := json.Unmarshal(raw, &rep)
	if resp.StatusCode != http.StatusOK {
		msg := ""
		if jerr == nil && rep.Error != nil {
			msg = ": " + oneLine(rep.Error.Message)
		}
		return nil, fmt.Errorf("%w: HTTP %d%s", ErrEndpoint, resp.StatusCode, msg)
	}
	if jerr != nil {
		return nil, fmt.Errorf("%w: invalid JSON in the reply", ErrEndpoint)
	}
	return o.vectors(rep, len(texts))
}

// vectors orders the reply's embeddings by index and checks their count and dimension.
func (o *OpenAI) vectors(rep embedReply, n int) ([][]float32, error) {
	if len(rep.Data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", ErrEndpoint, len(rep.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range rep.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= n || out[at] != nil {
			return nil, fmt.Errorf("%w: bad embedding index %d", ErrEndpoint, at)
		}
		out[at] = d.Embedding
	}
	want := o.dim.Load()
	for _, v := range out {
		if len(v) == 0 || len(v) > maxDim {
			return nil, fmt.Errorf("%w: embedding of %d dimensions", ErrEndpoint, len(v))
		}
		if want == 0 {
			o.dim.CompareAndSwap(0, int64(len(v)))
			want = o.dim.Load()
		}
		if int64(len(v)) != want {
			return nil, fmt.Errorf("%w: embedding of %d dimensions, expected %d", ErrEndpoint, len(v), want)
		}
	}
	return out, nil
}

// oneLine keeps an endpoint's message fit for a RESP error line: no CR/LF, at most 200 bytes.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200]
	}
	return strconv.Quote(s)[1 : len(strconv.Quote(s))-1]
}
