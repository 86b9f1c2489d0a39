package resp

import "bytes"

// parseInline reads one inline request: a line up to '\n' (one '\r' before it is dropped), split into
// arguments as Redis's sdssplitargs splits it (processInlineBuffer).
func parseInline(dst [][]byte, buf []byte) ([][]byte, int, int, error) {
	nl, need, tooBig := lineEnd(buf, 0, '\n')
	switch {
	case tooBig:
		return dst, 0, 0, protoErr(msgTooBigInline)
	case nl < 0:
		return dst, 0, need, nil
	}
	end := nl
	if end > 0 && buf[end-1] == '\r' {
		end--
	}
	line := buf[:end]
	if bytes.IndexAny(line, "\"'") >= 0 {
		// Quotes are unescaped in place: do it in a copy, so the input stays as it arrived. A
		// connection may parse the same bytes again (netpoll hands a batch that must block to a
		// worker, which serves it from the top), and must get the same arguments.
		line = append([]byte(nil), line...)
	}
	start := len(dst)
	dst, ok := splitArgs(dst, line)
	if !ok {
		return dst[:start], 0, 0, protoErr(msgUnbalanced)
	}
	return dst, nl + 1, 0, nil
}

// splitArgs appends the arguments of an inline line to dst, splitting as sdssplitargs does: blanks (C
// isspace) separate arguments; "double quotes" understand \xHH, \n \r \t \b \a and \<any other byte>;
// 'single quotes' understand only \'; a quote may open in the middle of an argument, and its closing
// quote ends the argument and must be followed by a blank or the end of the line. The line holds no NUL
// (lineEnd saw to that), so the C code's end of string is the end of the line. ok is false for
// unbalanced quotes.
func splitArgs(dst [][]byte, line []byte) ([][]byte, bool) {
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return dst, true
		}
		w, next, ok := splitToken(line, i)
		if !ok {
			return dst, false
		}
		dst = append(dst, line[i:w:w])
		i = next
	}
}

// splitToken reads the argument starting at line[i], unescaping it in place into line[i:w] (the write
// position w never passes the read position, as every escape is longer than what it stands for). next
// is where the search for the following argument resumes.
func splitToken(line []byte, i int) (w, next int, ok bool) {
	for ; i < len(line); i++ {
		switch line[i] {
		case ' ', '\n', '\r', '\t': // not \v or \f: sdssplitargs keeps those inside an argument
			return i, i + 1, true
		case '"':
			return unquoteDouble(line, i, i+1)
		case '\'':
			return unquoteSingle(line, i, i+1)
		}
	}
	return i, i, true
}

// unquoteDouble copies a double-quoted part from line[r:] (just after the opening quote) to line[w:],
// resolving escapes, and returns the end of the argument and the index after the closing quote.
func unquoteDouble(line []byte, w, r int) (end, next int, ok bool) {
	for ; r < len(line); w++ {
		c := line[r]
		switch {
		case c == '\\' && r+3 < len(line) && line[r+1] == 'x' && isHex(line[r+2]) && isHex(line[r+3]):
			line[w] = unhex(line[r+2])<<4 | unhex(line[r+3])
			r += 4
		case c == '\\' && r+1 < len(line):
			line[w] = unescape(line[r+1])
			r += 2
		case c == '"':
			return closeQuote(line, w, r)
		default:
			line[w] = c
			r++
		}
	}
	return 0, 0, false
}

// unquoteSingle is unquoteDouble for single quotes, where only \' is an escape.
func unquoteSingle(line []byte, w, r int) (end, next int, ok bool) {
	for ; r < len(line); w++ {
		c := line[r]
		switch {
		case c == '\\' && r+1 < len(line) && line[r+1] == '\'':
			line[w] = '\''
			r += 2
		case c == '\'':
			return closeQuote(line, w, r)
		default:
			line[w] = c
			r++
		}
	}
	return 0, 0, false
}

// closeQuote checks the byte after the closing quote at line[r]: Redis accepts only a blank or the end.
func closeQuote(line []byte, w, r int) (end, next int, ok bool) {
	if r+1 < len(line) && !isSpace(line[r+1]) {
		return 0, 0, false
	}
	return w, r + 1, true
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// isSpace is C's isspace in the "C" locale, the locale Redis classifies characters in.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
