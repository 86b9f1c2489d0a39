package acl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ParseFile parses an ACL file's text as Redis 7.0's ACLLoadFromFile does: lines split on
// single spaces (no quoting), each rule trimmed of tabs and line ends, "user <name> ..." only.
// Errors are collected in Redis's words, each ending ". " (an unknown command every time, other
// rule errors the first of a line only); name is the file as they name it.
func (r *Registry) ParseFile(text, name string) (Users, string) {
	out := Users{}
	var errs strings.Builder
	all := r.pubsubAll.Load()
	for i, line := range strings.Split(text, "\n") {
		no := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ")
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", name, no)
			continue
		}
		if hasSpaces(argv[1]) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", name, no, argv[1])
			continue
		}
		ops, _, ok := MergeSelectors(argv[2:])
		if !ok {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", name, no)
			continue
		}
		u := newUser(r.cat, argv[1], all)
		syntax, before := false, errs.Len()
		for _, op := range ops {
			err := u.apply(strings.Trim(op, "\t\r\n"), all)
			switch {
			case err == ErrUnknown:
				fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", name, no, op, err)
			case err != nil && !syntax:
				fmt.Fprintf(&errs, "%s:%d: %s. ", name, no, err)
				syntax = true
			}
		}
		if errs.Len() > before {
			continue
		}
		if out[argv[1]] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], no)
			continue
		}
		u.refresh()
		out[argv[1]] = u
	}
	return out, errs.String()
}

// LoadRefused ends the error of an ACL file that was not loaded.
const LoadRefused = "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"

// Load reads an ACL file and, when it has no error, makes its users the registry's
// (Replace); the users it removed are returned for their clients to be disconnected.
func (r *Registry) Load(path string) ([]*Entry, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Sprintf("Error loading ACLs, opening file '%s': %s", path, errnoText(err))
	}
	users, errs := r.ParseFile(string(b), path)
	if errs != "" {
		return nil, errs + LoadRefused
	}
	return r.Replace(users), ""
}

// Save writes the users to path through a temporary file renamed over it, as ACL SAVE does.
func (r *Registry) Save(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot save ACL file: %w", err)
	}
	_, err = tmp.WriteString(r.FileText())
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cannot save ACL file: %w", err)
	}
	return nil
}

func errnoText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		s := pe.Err.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}
