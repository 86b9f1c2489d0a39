package agentmem

import "slices"

// Msg is one message of a working-memory window.
type Msg struct {
	Role   string
	Text   []byte
	Tokens int
}

// Window is a session's working memory: the latest messages whose tokens fit its budget.
type Window struct {
	Budget int
	Msgs   []Msg // oldest first
	Tokens int
	bytes  int64
}

// Append adds a message of tokens tokens to session's window, whose budget becomes budget
// (0: the one it has, or the store's default for a new window), and drops the oldest messages
// until the window fits; it returns the window. A message larger than the budget is refused.
func (s *Store) Append(session, role string, text []byte, tokens, budget int) (*Window, error) {
	w := s.windows[session]
	if budget == 0 {
		budget = s.cfg.Window
		if w != nil {
			budget = w.Budget
		}
	}
	if tokens > budget {
		return nil, ErrWindowLarge
	}
	if w == nil {
		w = &Window{}
		s.windows[session] = w
		s.winBytes += int64(len(session)) + 64
	}
	w.Budget = budget
	w.Msgs = append(w.Msgs, Msg{Role: role, Text: text, Tokens: tokens})
	w.Tokens += tokens
	before := w.bytes
	w.bytes += int64(48 + len(role) + len(text))
	drop := 0
	for w.Tokens > w.Budget {
		w.Tokens -= w.Msgs[drop].Tokens
		w.bytes -= int64(48 + len(w.Msgs[drop].Role) + len(w.Msgs[drop].Text))
		drop++
	}
	if drop > 0 {
		w.Msgs = slices.Delete(w.Msgs, 0, drop)
	}
	s.winBytes += w.bytes - before
	return w, nil
}

// Window returns session's window, nil when it has none.
func (s *Store) Window(session string) *Window { return s.windows[session] }

// ClearWindow drops session's window and reports whether it had one.
func (s *Store) ClearWindow(session string) bool {
	w, ok := s.windows[session]
	if ok {
		s.winBytes -= w.bytes + int64(len(session)) + 64
	}
	delete(s.windows, session)
	return ok
}

// Sessions lists the sessions with a window, sorted.
func (s *Store) Sessions() []string {
	out := make([]string, 0, len(s.windows))
	for k := range s.windows {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Latest returns the newest messages of w whose tokens add up to at most max (0: w's budget),
// oldest first.
func (w *Window) Latest(max int) []Msg {
	if max <= 0 {
		max = w.Budget
	}
	i, sum := len(w.Msgs), 0
	for i > 0 && sum+w.Msgs[i-1].Tokens <= max {
		i--
		sum += w.Msgs[i].Tokens
	}
	return w.Msgs[i:]
}
