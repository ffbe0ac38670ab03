package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// adminLogger is the logger the storage engines get in an admin command: what they log
// (leftover files removed, a schema migrated) reads as the command's other messages do,
// a plain line on standard error ("removed leftover knowledge base files (count=1)";
// "warning: " before a warning). Left nil, they logged through slog's default, Go's log
// format with a date and level ("2026/11/30 23:10:00 INFO …") no other line of the CLI
// has. `serve` keeps its JSON handler: its lines go to a log collector.
func adminLogger(w io.Writer) *slog.Logger {
	return slog.New(&plainHandler{w: w, mu: new(sync.Mutex)})
}

// plainHandler writes a record as "message (key=value, …)", at info level and above.
type plainHandler struct {
	w      io.Writer
	mu     *sync.Mutex // shared by the handlers WithAttrs derives: one line at a time
	attrs  []slog.Attr
	prefix string // group names, dot-joined, before the next attributes' keys
}

func (h *plainHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *plainHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	}
	b.WriteString(r.Message)
	var pairs []string
	add := func(prefix string, a slog.Attr) { pairs = appendAttr(pairs, prefix, a) }
	for _, a := range h.attrs {
		add("", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		add(h.prefix, a)
		return true
	})
	if len(pairs) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(pairs, ", "))
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

// appendAttr adds a as key=value, a group's members with the group's name before theirs.
func appendAttr(pairs []string, prefix string, a slog.Attr) []string {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, m := range v.Group() {
			pairs = appendAttr(pairs, prefix, m)
		}
		return pairs
	}
	if a.Key == "" {
		return pairs
	}
	return append(pairs, prefix+a.Key+"="+v.String())
}

func (h *plainHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range attrs {
		if h.prefix != "" {
			a = slog.Group(strings.TrimSuffix(h.prefix, "."), a)
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *plainHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix += name + "."
	return &c
}
