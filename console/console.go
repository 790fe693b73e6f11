// Package console is warren's web console: a few static files (HTML, CSS,
// JavaScript modules) embedded in the binary and served by the API server
// at / and /console/. It has no build step and no framework: the pages are
// plain ES modules over the public HTTP API, and the charts are SVG drawn
// by hand, so a Go-only checkout builds and serves it as is. The one
// third-party part, xterm.js for the terminal, is vendored from npm by
// vendor.sh into static/vendor (committed; TestVendor checks it against
// the script's pins).
//
// The console holds no secrets and no server state: the browser keeps the
// API key in sessionStorage and sends it as an Authorization header on
// each API call, exactly as any other client does.
package console

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var files embed.FS

// CSP is the Content-Security-Policy of every console response: only the
// console's own scripts, styles and API (no inline code or styles, no
// other origin), never framed.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the console: / is the page, /console/NAME its assets.
func Handler() http.Handler {
	static, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		name := "index.html"
		if r.URL.Path != "/" {
			rest, ok := strings.CutPrefix(r.URL.Path, "/console/")
			if !ok || rest == "" || strings.HasSuffix(rest, "/") || !fs.ValidPath(rest) {
				http.Error(w, "console: no such file "+r.URL.Path, http.StatusNotFound)
				return
			}
			name = rest
		}
		data, err := fs.ReadFile(static, name)
		if err != nil {
			http.Error(w, "console: no such file "+r.URL.Path, http.StatusNotFound)
			return
		}
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
		// Assets change with the binary; revalidating is cheap on loopback
		// and never mixes an old script with a new page.
		h.Set("Cache-Control", "no-cache")
		if r.Method == http.MethodHead {
			return
		}
		w.Write(data)
	})
}
