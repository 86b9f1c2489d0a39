package strs

// AppendRepr appends b quoted as Redis's sdscatrepr does: in double quotes, with \\ \" \n \r
// \t \a \b escaped, other bytes outside 0x20-0x7e as \xHH, the rest as they are. MONITOR
// lines and CONFIG REWRITE's string values use it (SplitArgs reads it back to the same bytes).
func AppendRepr[S ~string | ~[]byte](dst []byte, b S) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '\\', '"':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\a':
			dst = append(dst, '\\', 'a')
		case '\b':
			dst = append(dst, '\\', 'b')
		default:
			if c >= 0x20 && c <= 0x7e {
				dst = append(dst, c)
			} else {
				dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			}
		}
	}
	return append(dst, '"')
}
