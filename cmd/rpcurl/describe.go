package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/linerpc/linerpc/openrpc"
)

// show prints what list or describe shows of doc.
func (o *options) show(e *env, d *document) error {
	doc := d.Document
	switch {
	case o.verb == verbList && o.json, o.verb == verbDescribe && o.json && o.method == "":
		return writeIndented(e.stdout, d.raw)
	case o.verb == verbList:
		var b strings.Builder
		for _, m := range doc.Methods {
			b.WriteString(m.Name)
			if m.IsNotification() {
				b.WriteString(" (notification)")
			}
			b.WriteByte('\n')
		}
		_, err := io.WriteString(e.stdout, b.String())
		return err
	case o.method == "":
		_, err := io.WriteString(e.stdout, describeDoc(doc))
		return err
	}
	i := slices.IndexFunc(doc.Methods, func(m openrpc.Method) bool { return m.Name == o.method })
	if i < 0 {
		return &missingFailure{fmt.Errorf("the document has no method %q ('rpcurl ... list' lists them)", o.method)}
	}
	m := &doc.Methods[i]
	if o.json {
		var raw struct {
			Methods []json.RawMessage `json:"methods"`
		}
		if err := json.Unmarshal(d.raw, &raw); err != nil || len(raw.Methods) != len(doc.Methods) {
			return writeJSON(e.stdout, m)
		}
		return writeIndented(e.stdout, raw.Methods[i])
	}
	_, err := io.WriteString(e.stdout, describeMethod(doc, m))
	return err
}

// docSummary is one line about doc: its title, version and methods.
func docSummary(doc *openrpc.Document) string {
	n := len(doc.Methods)
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("%s %s, %d method%s", doc.Info.Title, doc.Info.Version, n, s)
}

// describeDoc describes the API: its info, and each method with its
// summary.
func describeDoc(doc *openrpc.Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", doc.Info.Title, doc.Info.Version)
	if d := strings.TrimSpace(doc.Info.Description); d != "" {
		b.WriteString(indent(d, "  ") + "\n")
	}
	if len(doc.Methods) == 0 {
		b.WriteString("\nNo methods.\n")
		return b.String()
	}
	b.WriteString("\nMethods:\n")
	width := 0
	for _, m := range doc.Methods {
		width = max(width, len(m.Name))
	}
	for _, m := range doc.Methods {
		line := fmt.Sprintf("  %-*s  ", width, m.Name)
		if m.IsNotification() {
			line += "(notification) "
		}
		if m.Deprecated {
			line += "(deprecated) "
		}
		line += m.Summary
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}

// describeMethod describes m: its summary and description, its params
// one per line, the schema its params are checked against, its result's
// schema, its errors and examples, and the document's schemas they refer
// to.
func describeMethod(doc *openrpc.Document, m *openrpc.Method) string {
	var b strings.Builder
	kind := "method"
	if m.IsNotification() {
		kind = "notification"
	}
	fmt.Fprintf(&b, "%s (%s)\n", m.Name, kind)
	if m.Summary != "" {
		b.WriteString(indent(m.Summary, "  ") + "\n")
	}
	if d := strings.TrimSpace(m.Description); d != "" {
		b.WriteString("\n" + indent(d, "  ") + "\n")
	}
	var notes []string
	if len(m.Tags) > 0 {
		var tags []string
		for _, t := range m.Tags {
			tags = append(tags, t.Name)
		}
		notes = append(notes, "tags: "+strings.Join(tags, ", "))
	}
	if m.Deprecated {
		notes = append(notes, "deprecated")
	}
	if len(notes) > 0 {
		b.WriteString("\n  " + strings.Join(notes, "; ") + "\n")
	}

	whole := string(m.Extensions[openrpc.WholeParams]) == "true" && len(m.Params) == 1
	how := map[string]string{"by-name": "by name", "by-position": "by position"}[m.ParamStructure]
	switch {
	case whole:
		how = "the whole params member"
	case how == "":
		how = "by name or by position"
	}
	if len(m.Params) == 0 {
		b.WriteString("\nParams: none\n")
	} else {
		fmt.Fprintf(&b, "\nParams (%s):\n", how)
		var rows [][]string
		for i, p := range m.Params {
			name := p.Name
			if m.ParamStructure == "by-position" {
				name = fmt.Sprintf("%d. %s", i+1, p.Name)
			}
			req := "optional"
			if p.Required || whole {
				req = "required"
			}
			desc := p.Summary
			if desc == "" {
				desc = firstLine(p.Description)
			}
			if p.Deprecated {
				desc = strings.TrimSpace("(deprecated) " + desc)
			}
			rows = append(rows, []string{name, typeOf(p.Schema), req, desc})
		}
		b.WriteString(table(rows, "  "))
	}
	params := m.ParamsSchema()
	b.WriteString("\nParams schema:\n" + schemaJSON(params) + "\n")
	shown := []*openrpc.Schema{params}
	if m.Result != nil {
		fmt.Fprintf(&b, "\nResult schema (%s):\n%s\n", m.Result.Name, schemaJSON(m.Result.Schema))
		shown = append(shown, m.Result.Schema)
	}
	if len(m.Errors) > 0 {
		b.WriteString("\nErrors:\n")
		var rows [][]string
		for _, e := range m.Errors {
			row := []string{fmt.Sprint(e.Code), e.Message}
			if e.Data != nil {
				row = append(row, "data: "+excerpt(e.Data))
			}
			rows = append(rows, row)
		}
		b.WriteString(table(rows, "  "))
	}
	if len(m.Examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, ex := range m.Examples {
			var ps []string
			for _, p := range ex.Params {
				ps = append(ps, p.Name+"="+excerpt(p.Value))
			}
			line := "  " + ex.Name + ": " + strings.Join(ps, ", ")
			if ex.Result != nil {
				line += " -> " + excerpt(ex.Result.Value)
			}
			b.WriteString(line + "\n")
		}
	}
	if refs := referred(doc, shown...); len(refs) > 0 {
		b.WriteString("\nSchemas referred to:\n")
		for _, ref := range refs {
			s := doc.Components.Schemas[strings.TrimPrefix(ref, refPrefix)]
			fmt.Fprintf(&b, "%s:\n%s\n", ref, schemaJSON(s))
		}
	}
	return b.String()
}

// refPrefix is where a document's named schemas are.
const refPrefix = "#/components/schemas/"

// referred returns the references to the document's schemas that
// schemas make, and those schemas in turn, in the order first met.
func referred(doc *openrpc.Document, schemas ...*openrpc.Schema) []string {
	if doc.Components == nil {
		return nil
	}
	var refs []string
	seen := map[string]bool{}
	queue := slices.Clone(schemas)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, ref := range refsIn(s) {
			name, ok := strings.CutPrefix(ref, refPrefix)
			if !ok || seen[ref] {
				continue
			}
			seen[ref] = true
			if target, ok := doc.Components.Schemas[name]; ok {
				refs = append(refs, ref)
				queue = append(queue, target)
			}
		}
	}
	return refs
}

// refsIn returns the "$ref" values of s, in the order its JSON has them.
func refsIn(s *openrpc.Schema) []string {
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var refs []string
	dec := json.NewDecoder(bytes.NewReader(b))
	wasKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return refs
		}
		str, isStr := tok.(string)
		if wasKey && isStr {
			refs = append(refs, str)
		}
		wasKey = isStr && str == "$ref" && dec.More() // a key: a value follows
	}
}

// typeOf is a short name for what s accepts, for the params table.
func typeOf(s *openrpc.Schema) string {
	switch {
	case s == nil:
		return "any"
	case s.IsFalse():
		return "nothing"
	case s.Ref != "":
		return s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]
	case s.Const != nil:
		return excerpt(s.Const)
	case len(s.Enum) > 0:
		var vs []string
		for _, v := range s.Enum {
			vs = append(vs, excerpt(v))
		}
		return strings.Join(vs, "|")
	case len(s.AnyOf) > 0 || len(s.OneOf) > 0:
		var ts []string
		for _, x := range append(slices.Clone(s.AnyOf), s.OneOf...) {
			ts = append(ts, typeOf(x))
		}
		return strings.Join(ts, "|")
	case len(s.AllOf) == 1 && len(s.Type) == 0:
		return typeOf(s.AllOf[0])
	case len(s.Type) == 0:
		return "any"
	}
	var ts []string
	for _, t := range s.Type {
		switch {
		case t == "array" && s.Items != nil:
			t = typeOf(s.Items) + "[]"
		case t == "string" && s.Format != "":
			t += " (" + s.Format + ")"
		}
		ts = append(ts, t)
	}
	return strings.Join(ts, "|")
}

// schemaJSON writes s as indented JSON.
func schemaJSON(s *openrpc.Schema) string {
	var b bytes.Buffer
	if err := writeJSON(&b, s); err != nil {
		return "(" + err.Error() + ")"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeJSON writes v as indented JSON, <, > and & as they are.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeIndented writes the JSON raw indented, its members in the order
// they came.
func writeIndented(w io.Writer, raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// table aligns the columns of rows, each line starting with prefix.
func table(rows [][]string, prefix string) string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		line := prefix
		for i, c := range r {
			if i < len(r)-1 {
				line += fmt.Sprintf("%-*s  ", widths[i], c)
			} else {
				line += c
			}
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}

// textWidth is the width descriptions are wrapped to, indent included.
const textWidth = 80

// indent prefixes each line of s, and wraps the lines of prose longer
// than textWidth at spaces: not those in a ``` fence, nor those that
// start with white space (code, continued list items), nor table rows.
func indent(s, prefix string) string {
	var out []string
	fenced := false
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || width(prefix+line) <= textWidth || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "|") {
			out = append(out, prefix+line)
			continue
		}
		cur := prefix
		for _, word := range strings.Fields(line) {
			if cur != prefix && width(cur)+1+width(word) > textWidth {
				out = append(out, cur)
				cur = prefix
			}
			if cur != prefix {
				cur += " "
			}
			cur += word
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// width is the number of characters of s.
func width(s string) int { return utf8.RuneCountInString(s) }
