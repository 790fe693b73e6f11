package console_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
)

var screenshots = flag.String("console.screenshots", "", "write a screenshot of each page of the browser test into this directory")

const chromium = "/usr/bin/chromium"

// browser is one headless Chromium for a test, with every console
// message of its tabs recorded.
type browser struct {
	t     *testing.T
	alloc context.Context
	mu    sync.Mutex
	msgs  []string
	shots []string // names, in order, of the screenshots taken
	dir   string
}

func needChromium(t *testing.T) {
	if _, err := exec.LookPath(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: scripts/test.sh installs Debian's chromium (scripts/test-packages.txt)", chromium)
		}
		t.Skipf("browser test skipped: %s is missing (apt-get install chromium)", chromium)
	}
}

func newBrowser(t *testing.T) *browser {
	needChromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 800),
		chromedp.UserDataDir(t.TempDir()),
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	// The first context starts the browser; tabs get browser contexts of
	// their own under it.
	root, cancelRoot := chromedp.NewContext(alloc)
	t.Cleanup(cancelRoot)
	if err := chromedp.Do(root); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	return &browser{t: t, alloc: root, dir: *screenshots}
}

// tab opens a new tab in its own browser context (its own
// sessionStorage: a second user), recording its console.
func (b *browser) tab(name string) context.Context {
	ctx, cancel := chromedp.NewContext(b.alloc, chromedp.WithNewBrowserContext())
	b.t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	b.t.Cleanup(cancelT)
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == "error" || m.IsException() || m.Type == chromedp.ConsoleType("warning") && m.Source == "security" {
				b.mu.Lock()
				b.msgs = append(b.msgs, fmt.Sprintf("%s: [%s %s] %s (%s:%d)", name, m.Type, m.Source, m.Text, m.URL, m.Line))
				b.mu.Unlock()
			}
		}
	}()
	return ctx
}

// shot saves a screenshot of the tab when screenshots are asked for, and
// keeps the tab for a screenshot on failure.
func (b *browser) shot(ctx context.Context, name string) {
	b.t.Helper()
	if b.dir == "" {
		return
	}
	b.save(ctx, b.dir, name)
}

func (b *browser) save(ctx context.Context, dir, name string) {
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.t.Logf("screenshot: %s", p)
}

// onFailure writes a screenshot of tab into the test's output directory
// (kept with -artifacts; else a directory under TMPDIR that is kept).
func (b *browser) onFailure(ctx context.Context, name string) {
	b.t.Cleanup(func() {
		if !b.t.Failed() {
			return
		}
		dir := b.dir
		if dir == "" {
			if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
				dir = b.t.ArtifactDir()
			} else if d, err := os.MkdirTemp("", "warren-console-failure-"); err == nil {
				dir = d
			}
		}
		// The tab's own context may have timed out: take the shot in a
		// fresh one on the same target.
		shotCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		b.save(shotCtx, dir, "failure-"+name)
	})
}

// errors returns the console errors so far, except those matching allow.
func (b *browser) errors(allow ...*regexp.Regexp) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
next:
	for _, m := range b.msgs {
		for _, re := range allow {
			if re.MatchString(m) {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	// A step that waits on an element that never comes fails here, not
	// at the tab's deadline.
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitJS waits (bounded) until the expression is true.
func waitJS(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(15*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`"filter=" + (document.querySelector("#filter") || {}).value + "\n" + document.body.innerText.slice(0, 2000)`))
		t.Fatalf("%s: %s never held: %v\npage:\n%s", what, js, err, body)
	}
}

type css = chromedp.CSS

// syncBuffer is the server's log, written from its handlers' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestBrowser drives the console in a real headless Chromium against a
// real node on loopback, as a person would: sign in, create, run, upload,
// edit, fork, delete, look at the node; and checks what the API sees.
func TestBrowser(t *testing.T) {
	b := newBrowser(t)
	var logs syncBuffer
	n, srv := startServerLog(t, slog.New(slog.NewJSONHandler(&logs, nil)))
	ctx := context.Background()
	admin, err := client.New(srv.URL, n.AdminKey)
	if err != nil {
		t.Fatal(err)
	}
	keyA, err := admin.CreateKey(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	keyB, err := admin.CreateKey(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := client.New(srv.URL, keyA.Key)
	if err != nil {
		t.Fatal(err)
	}

	tab := b.tab("alice")
	b.onFailure(tab, "alice")

	// A wrong key: an error on the sign-in form, not a blank page.
	do(t, tab, "open the console", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(css("#key")))
	b.shot(tab, "signin")
	if id := eval[string](t, tab, `document.activeElement.id`); id != "key" {
		t.Errorf("focus on %q at sign-in, want the key field", id)
	}
	do(t, tab, "sign in with a wrong key", chromedp.SendKeys(css("#key"), "wk_not_a_key\r"))
	waitJS(t, tab, "wrong key", `document.querySelector("#signin-error").textContent.includes("not known")`)
	b.shot(tab, "signin-wrong-key")
	if got := eval[string](t, tab, `sessionStorage.getItem("warren.key") || ""`); got != "" {
		t.Errorf("a wrong key was stored: %q", got)
	}

	// The right key, typed and submitted from the keyboard alone.
	do(t, tab, "sign in", chromedp.Clear(css("#key")), chromedp.SendKeys(css("#key"), keyA.Key+"\r"),
		chromedp.WaitVisible(css("#create")))
	waitJS(t, tab, "table loaded", `document.querySelector("#sandboxes").dataset.loaded === "true"`)
	if u := eval[string](t, tab, `location.href`); strings.Contains(u, keyA.Key) {
		t.Errorf("the key is in the URL: %s", u)
	}

	// Create a sandbox from the page.
	do(t, tab, "create", chromedp.Click(css("#create")))
	waitJS(t, tab, "one row", `document.querySelectorAll("#sandbox-rows tr[data-id]").length === 1`)
	sbs, err := alice.List(ctx, api.ListOptions{})
	if err != nil || len(sbs) != 1 {
		t.Fatalf("API list after create: %v, %v", sbs, err)
	}
	id := sbs[0].ID
	if got := eval[string](t, tab, `document.querySelector("#sandbox-rows tr[data-id]").dataset.id`); got != id {
		t.Fatalf("row is %q, the API has %q", got, id)
	}
	b.shot(tab, "sandboxes")

	// Live refresh: one made through the API appears on the page by
	// itself, and goes when deleted; created with a memory limit from the
	// form, the API has the limit.
	other, err := alice.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, tab, "live row", `!!document.querySelector('#sandbox-rows tr[data-id="`+other.ID+`"]')`)
	if err := alice.Delete(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tab, "live row gone", `!document.querySelector('#sandbox-rows tr[data-id="`+other.ID+`"]')`)
	do(t, tab, "create with a memory limit", chromedp.SendKeys(css("#create-memory"), "64"), chromedp.Click(css("#create")))
	waitJS(t, tab, "two rows", `document.querySelectorAll("#sandbox-rows tr[data-id]").length === 2`)
	limited := eval[string](t, tab, `[...document.querySelectorAll("#sandbox-rows tr[data-id]")].map(r => r.dataset.id).find(x => x !== "`+id+`")`)
	if sb, err := alice.Get(ctx, limited); err != nil || sb.Limits.MaxMemoryBytes != 64<<20 {
		t.Errorf("sandbox made with 64 MiB from the form: %+v, %v", sb.Limits, err)
	}
	if err := alice.Delete(ctx, limited); err != nil {
		t.Fatal(err)
	}
	do(t, tab, "clear the memory field", chromedp.Clear(css("#create-memory")))
	waitJS(t, tab, "one row again", `document.querySelectorAll("#sandbox-rows tr[data-id]").length === 1`)

	// Its page: run a command in the exec box and read its output back.
	do(t, tab, "open the sandbox", chromedp.Click(css(`#sandbox-rows a`)), chromedp.WaitVisible(css("#exec-script")))
	waitJS(t, tab, "sandbox loaded", `document.querySelector("#main").dataset.loaded === "true"`)
	if facts := eval[string](t, tab, `document.querySelector("#sandbox-facts").textContent`); !strings.Contains(facts, "Staterunning") || strings.Contains(facts, "[object") {
		t.Errorf("sandbox facts read %q", facts)
	}
	do(t, tab, "exec", chromedp.SendKeys(css("#exec-script"), "echo hi > /tmp/a; ls /tmp"), chromedp.Click(css("#exec-run")))
	waitJS(t, tab, "exec exit", `document.querySelector("#exec-output").dataset.exit === "0"`)
	stdout := eval[string](t, tab, `[...document.querySelectorAll("#exec-output .stdout")].map(e => e.textContent).join("")`)
	if !regexp.MustCompile(`(?m)^a$`).MatchString(stdout) {
		t.Errorf("exec box stdout %q: want a line \"a\" (ls /tmp)", stdout)
	}
	if st := eval[string](t, tab, `document.querySelector("#exec-status").textContent`); !strings.HasPrefix(st, "exit 0") {
		t.Errorf("exec status %q, want exit 0", st)
	}
	b.shot(tab, "sandbox-exec")
	// A failing command shows its stderr and exit code.
	do(t, tab, "exec failing", chromedp.SetValue(css("#exec-script"), "echo oops >&2; exit 3"), chromedp.Click(css("#exec-run")))
	waitJS(t, tab, "exec exit 3", `document.querySelector("#exec-output").dataset.exit === "3"`)
	if se := eval[string](t, tab, `[...document.querySelectorAll("#exec-output .stderr")].map(e => e.textContent).join("")`); se != "oops\n" {
		t.Errorf("stderr %q, want oops", se)
	}

	// The terminal: xterm.js on the PTY WebSocket. Type into it, read the
	// rendered rows back, and resize the window: the shell's stty follows.
	do(t, tab, "open the terminal", chromedp.Click(css("#terminal-open")))
	waitJS(t, tab, "terminal connected", `document.querySelector("#terminal").dataset.state === "open"`)
	const termRows = `[...document.querySelectorAll("#term .xterm-rows > div")].map(r => r.textContent.replace(/\u00a0/g, " ").trimEnd())`
	waitJS(t, tab, "terminal prompt", termRows+`.some(l => l.endsWith("$"))`)
	// Text arrives as typed text (Input.insertText), Enter as a key press,
	// the two ways xterm.js reads a keyboard.
	typeTerm := func(what, line string) {
		t.Helper()
		do(t, tab, what, chromedp.Evaluate[chromedp.Void](`document.querySelector("#term .xterm-helper-textarea").focus()`))
		if _, err := chromedp.Call(tab, input.InsertText, input.InsertTextParams{Text: strings.TrimSuffix(line, "\r")}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			if _, err := chromedp.Call(tab, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}); err != nil {
				t.Fatalf("%s: Enter: %v", what, err)
			}
		}
	}
	typeTerm("type echo hi", "echo hi\r")
	waitJS(t, tab, "hi rendered", termRows+`.includes("hi")`)
	typeTerm("type into the terminal", "echo hi > /tmp/a; ls /tmp\r")
	waitJS(t, tab, "ls output rendered", termRows+`.includes("a")`)
	b.shot(tab, "sandbox-terminal")
	sizeOf := func() (cols, rows int) {
		t.Helper()
		s := eval[string](t, tab, `document.querySelector("#term").dataset.size || ""`)
		if _, err := fmt.Sscanf(s, "%dx%d", &cols, &rows); err != nil {
			t.Fatalf("terminal size %q: %v", s, err)
		}
		return cols, rows
	}
	cols0, _ := sizeOf()
	do(t, tab, "narrow the window", chromedp.EmulateViewport(760, 800))
	waitJS(t, tab, "terminal refit", fmt.Sprintf(`document.querySelector("#term").dataset.size.split("x")[0] < %d`, cols0))
	cols1, rows1 := sizeOf()
	typeTerm("stty size", "stty size\r")
	waitJS(t, tab, "stty size follows the window", termRows+fmt.Sprintf(`.includes("%d %d")`, rows1, cols1))
	do(t, tab, "restore the window", chromedp.EmulateViewport(1280, 800))
	typeTerm("exit the shell", "exit 4\r")
	waitJS(t, tab, "terminal closed with the status", `document.querySelector("#terminal").dataset.exit === "4"`)

	// Upload a file into the listed directory; see it in the page and
	// through the API.
	waitJS(t, tab, "files listed", `!!document.querySelector("#file-rows").dataset.dir`)
	dir := eval[string](t, tab, `document.querySelector("#file-rows").dataset.dir`)
	local := filepath.Join(t.TempDir(), "up.txt")
	if err := os.WriteFile(local, []byte("uploaded from the browser\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	do(t, tab, "upload", chromedp.SetUploadFiles(css("#upload"), []string{local}))
	waitJS(t, tab, "uploaded row", `!!document.querySelector('#file-rows tr[data-name="up.txt"]')`)
	remote := strings.TrimSuffix(dir, "/") + "/up.txt"
	data, err := alice.ReadFile(ctx, id, remote, 0, 0)
	if err != nil || string(data) != "uploaded from the browser\n" {
		t.Fatalf("API read of %s after upload: %q, %v", remote, data, err)
	}

	// Edit and save it.
	do(t, tab, "open in the editor", chromedp.Click(css(`#file-rows tr[data-name="up.txt"] button[data-open]`)), chromedp.WaitVisible(css("#editor")))
	if v := eval[string](t, tab, `document.querySelector("#editor").value`); v != "uploaded from the browser\n" {
		t.Errorf("editor shows %q", v)
	}
	do(t, tab, "edit and save", chromedp.SetValue(css("#editor"), "edited in the console\n"), chromedp.Click(css("#save")))
	waitJS(t, tab, "saved", `document.querySelector("#save-status").textContent.startsWith("Saved")`)
	if data, err := alice.ReadFile(ctx, id, remote, 0, 0); err != nil || string(data) != "edited in the console\n" {
		t.Errorf("API read after save: %q, %v", data, err)
	}
	b.shot(tab, "sandbox")

	// Download it: the page fetches with the key in the header and hands
	// the browser a blob, which lands in the download directory.
	downloads := t.TempDir()
	if _, err := chromedp.CallBrowser(tab, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads,
		BrowserContextID: chromedp.FromContext(tab).BrowserContextID,
	}); err != nil {
		t.Fatal(err)
	}
	do(t, tab, "download", chromedp.Click(css(`#file-rows tr[data-name="up.txt"] button[data-action="download"]`)))
	got := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(downloads, "up.txt")); err == nil && len(b) > 0 {
			got = string(b)
			break
		}
	}
	if got != "edited in the console\n" {
		t.Errorf("downloaded up.txt: %q", got)
	}

	// Drop a file on the listing (a DragEvent with a DataTransfer, as a
	// drag from the desktop delivers it).
	do(t, tab, "drop a file", chromedp.Evaluate[chromedp.Void](`{
		const dt = new DataTransfer();
		dt.items.add(new File(["dropped\n"], "dropped.txt", { type: "text/plain" }));
		document.querySelector("#drop").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
	}`))
	waitJS(t, tab, "dropped row", `!!document.querySelector('#file-rows tr[data-name="dropped.txt"]')`)
	if data, err := alice.ReadFile(ctx, id, strings.TrimSuffix(dir, "/")+"/dropped.txt", 0, 0); err != nil || string(data) != "dropped\n" {
		t.Errorf("API read of the dropped file: %q, %v", data, err)
	}

	// A binary file opens in the hex view, not the editor.
	if err := alice.WriteFile(ctx, id, api.WriteFileRequest{Path: strings.TrimSuffix(dir, "/") + "/bin.dat", Data: strings.NewReader("\x00\x01\x02ABC\xff")}); err != nil {
		t.Fatal(err)
	}
	do(t, tab, "refresh for bin.dat", chromedp.Click(css(`#files-path + button`)))
	waitJS(t, tab, "bin.dat listed", `!!document.querySelector('#file-rows tr[data-name="bin.dat"]')`)
	do(t, tab, "open bin.dat", chromedp.Click(css(`#file-rows tr[data-name="bin.dat"] button[data-open]`)), chromedp.WaitVisible(css("#hex")))
	if hx := eval[string](t, tab, `document.querySelector("#hex").textContent`); !strings.HasPrefix(hx, "00000000  00 01 02 41 42 43 ff") || !strings.HasSuffix(hx, "...ABC.") {
		t.Errorf("hex view: %q", hx)
	}

	// An image opens as an image (a blob URL, which the CSP allows).
	var pngBuf bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	if err := alice.WriteFile(ctx, id, api.WriteFileRequest{Path: strings.TrimSuffix(dir, "/") + "/dot.png", Data: &pngBuf}); err != nil {
		t.Fatal(err)
	}
	do(t, tab, "refresh for dot.png", chromedp.Click(css(`#files-path + button`)))
	waitJS(t, tab, "dot.png listed", `!!document.querySelector('#file-rows tr[data-name="dot.png"]')`)
	do(t, tab, "open dot.png", chromedp.Click(css(`#file-rows tr[data-name="dot.png"] button[data-open]`)))
	waitJS(t, tab, "image decoded", `(i => !!i && i.complete && i.naturalWidth === 3 && i.naturalHeight === 2)(document.querySelector("#viewer img"))`)

	// Rename a copy and delete it, each through the page's dialog.
	if err := alice.WriteFile(ctx, id, api.WriteFileRequest{Path: strings.TrimSuffix(dir, "/") + "/copy.txt", Data: strings.NewReader("copy\n")}); err != nil {
		t.Fatal(err)
	}
	do(t, tab, "refresh the listing", chromedp.Click(css(`#files-path + button`)))
	waitJS(t, tab, "copy listed", `!!document.querySelector('#file-rows tr[data-name="copy.txt"]')`)
	renamed := strings.TrimSuffix(dir, "/") + "/renamed.txt"
	do(t, tab, "rename", chromedp.Click(css(`#file-rows tr[data-name="copy.txt"] button[data-action="rename"]`)),
		chromedp.WaitVisible(css("#dialog-input")), chromedp.SendKeys(css("#dialog-input"), renamed+"\r"))
	waitJS(t, tab, "renamed row", `!!document.querySelector('#file-rows tr[data-name="renamed.txt"]') && !document.querySelector('#file-rows tr[data-name="copy.txt"]')`)
	if data, err := alice.ReadFile(ctx, id, renamed, 0, 0); err != nil || string(data) != "copy\n" {
		t.Errorf("API read of %s after rename: %q, %v", renamed, data, err)
	}
	do(t, tab, "delete a file", chromedp.Click(css(`#file-rows tr[data-name="renamed.txt"] button[data-action="delete"]`)),
		chromedp.WaitVisible(css("#dialog-ok")), chromedp.Click(css("#dialog-ok")))
	waitJS(t, tab, "file gone", `!document.querySelector('#file-rows tr[data-name="renamed.txt"]')`)
	if _, err := alice.Stat(ctx, id, renamed); err == nil {
		t.Errorf("%s still exists after delete from the page", renamed)
	}

	// Background process: start one and see its output.
	do(t, tab, "start a process", chromedp.SendKeys(css("#process-script"), "echo from-the-background"), chromedp.Click(css("#process-start")))
	waitJS(t, tab, "process output", `document.querySelector("#process-output").textContent.includes("from-the-background") && !!document.querySelector("#process-output .exit")`)
	// A long one, stopped from its row.
	do(t, tab, "start a long process", chromedp.SendKeys(css("#process-script"), "sleep 60"), chromedp.Click(css("#process-start")))
	waitJS(t, tab, "stop button", `!!document.querySelector('#process-rows button[data-action="kill"]')`)
	do(t, tab, "stop it", chromedp.Click(css(`#process-rows button[data-action="kill"]`)))
	waitJS(t, tab, "stopped", `!document.querySelector('#process-rows button[data-action="kill"]') && [...document.querySelectorAll("#process-rows tr")].every(r => !r.textContent.includes("running"))`)
	// Three: the terminal's shell (exited above) and these two.
	if ps, err := alice.ListProcesses(ctx, id); err != nil || len(ps) != 3 || ps[0].PTY == nil || ps[0].Running || ps[1].Running || ps[2].Running {
		t.Errorf("API processes after stop: %+v, %v", ps, err)
	}

	// Fork from the Sandboxes page: two rows; then delete the fork after
	// confirming.
	do(t, tab, "back to the list", chromedp.Click(css(`#nav a[data-nav="sandboxes"]`)))
	waitJS(t, tab, "list again", `document.querySelectorAll("#sandbox-rows tr[data-id]").length === 1`)
	do(t, tab, "fork", chromedp.Click(css(`#sandbox-rows button[data-action="fork"]`)))
	waitJS(t, tab, "two rows", `document.querySelectorAll("#sandbox-rows tr[data-id]").length === 2`)
	if sbs, err := alice.List(ctx, api.ListOptions{}); err != nil || len(sbs) != 2 {
		t.Fatalf("API list after fork: %d, %v", len(sbs), err)
	}
	fork := eval[string](t, tab, fmt.Sprintf(`[...document.querySelectorAll("#sandbox-rows tr[data-id]")].map(r => r.dataset.id).find(x => x !== %q)`, id))
	b.shot(tab, "sandboxes-forked")

	// Filter to one row, then clear it.
	do(t, tab, "filter", chromedp.SendKeys(css("#filter"), fork))
	waitJS(t, tab, "filtered", `document.querySelectorAll("#sandbox-rows tr[data-id]").length === 1 && document.querySelector("#sandbox-rows tr[data-id]").dataset.id === "`+fork+`"`)
	do(t, tab, "clear filter", chromedp.Evaluate[chromedp.Void](`{ const f = document.querySelector("#filter"); f.value = ""; f.dispatchEvent(new Event("input")); }`))
	waitJS(t, tab, "unfiltered", `document.querySelectorAll("#sandbox-rows tr[data-id]").length === 2`)

	// Sort by id from the keyboard: focus the header button, press Enter.
	do(t, tab, "sort by id", chromedp.Focus(css(`button.sort[data-sort="id"]`)), chromedp.KeyEvent("\r"))
	waitJS(t, tab, "sorted by id", `document.querySelector('button.sort[data-sort="id"]').parentElement.getAttribute("aria-sort") === "ascending"`)
	ids := eval[[]string](t, tab, `[...document.querySelectorAll("#sandbox-rows tr[data-id]")].map(r => r.dataset.id)`)
	if !slices.IsSorted(ids) {
		t.Errorf("rows after sorting by id: %v", ids)
	}

	// Hibernate and resume the fork from its row.
	do(t, tab, "hibernate", chromedp.Click(css(fmt.Sprintf(`#sandbox-rows tr[data-id=%q] button[data-action="hibernate"]`, fork))))
	waitJS(t, tab, "standby row", `document.querySelector('#sandbox-rows tr[data-id="`+fork+`"]').dataset.state === "standby"`)
	if sb, err := alice.Get(ctx, fork); err != nil || sb.State != api.StateStandby {
		t.Errorf("API after hibernate: %v, %v", sb.State, err)
	}
	do(t, tab, "resume", chromedp.Click(css(fmt.Sprintf(`#sandbox-rows tr[data-id=%q] button[data-action="resume"]`, fork))))
	waitJS(t, tab, "running row", `document.querySelector('#sandbox-rows tr[data-id="`+fork+`"]').dataset.state === "running"`)

	// Snapshot the first one, named in the dialog.
	do(t, tab, "snapshot", chromedp.Click(css(fmt.Sprintf(`#sandbox-rows tr[data-id=%q] button[data-action="snapshot"]`, id))),
		chromedp.WaitVisible(css("#dialog-input")), chromedp.SendKeys(css("#dialog-input"), "snap1\r"))
	waitJS(t, tab, "snapshot banner", `document.querySelector("#banner").textContent.includes("snap1")`)
	if snap, err := alice.GetSnapshot(ctx, "snap1"); err != nil || snap.Sandbox != id {
		t.Fatalf("API snapshot snap1: %+v, %v (banner %q)", snap, err, eval[string](t, tab, `document.querySelector("#banner").textContent`))
	}
	do(t, tab, "delete the fork", chromedp.Click(css(fmt.Sprintf(`#sandbox-rows tr[data-id=%q] button[data-action="delete"]`, fork))), chromedp.WaitVisible(css("#dialog-ok")))
	b.shot(tab, "confirm-delete")
	// Cancel first: nothing is deleted.
	do(t, tab, "cancel", chromedp.Click(css("#dialog-cancel")), chromedp.WaitNotVisible(css("#dialog")))
	if sbs, _ := alice.List(ctx, api.ListOptions{}); len(sbs) != 2 {
		t.Fatalf("cancelled delete deleted: %d sandboxes", len(sbs))
	}
	// The button stays disabled until the cancelled action has finished.
	del := css(fmt.Sprintf(`#sandbox-rows tr[data-id=%q] button[data-action="delete"]`, fork))
	do(t, tab, "delete for real", chromedp.WaitEnabled(del), chromedp.Click(del),
		chromedp.WaitVisible(css("#dialog-ok")), chromedp.Click(css("#dialog-ok")))
	waitJS(t, tab, "one row after delete", `document.querySelectorAll("#sandbox-rows tr[data-id]").length === 1`)
	if _, err := alice.Get(ctx, fork); err == nil {
		t.Errorf("fork %s still exists after delete", fork)
	}

	// "Create from here" on the sandbox's snapshots: a new sandbox with
	// the snapshot's files.
	do(t, tab, "sandbox page again", chromedp.Click(css(fmt.Sprintf(`#sandbox-rows tr[data-id=%q] a`, id))))
	waitJS(t, tab, "snapshot listed", `!!document.querySelector('#snapshot-rows tr[data-name="snap1"]')`)
	do(t, tab, "create from here", chromedp.Click(css(`#snapshot-rows tr[data-name="snap1"] button[data-action="from-snapshot"]`)))
	waitJS(t, tab, "on the new sandbox", `location.hash.startsWith("#/sandbox/") && !location.hash.endsWith("`+id+`") && document.querySelector("#main").dataset.loaded === "true"`)
	fromSnap := eval[string](t, tab, `document.querySelector("#sandbox-id").textContent`)
	if data, err := alice.ReadFile(ctx, fromSnap, remote, 0, 0); err != nil || string(data) != "edited in the console\n" {
		t.Errorf("sandbox %s from snap1: %s is %q, %v", fromSnap, remote, data, err)
	}
	// Leave its page before deleting it behind the page's back: a refresh
	// in flight would meet a 404, which the browser logs as an error.
	do(t, tab, "back to the list", chromedp.Evaluate[chromedp.Void](`location.hash = "#/sandboxes"`))
	waitJS(t, tab, "list again", `document.querySelector("#sandboxes") && document.querySelector("#sandboxes").dataset.loaded === "true"`)
	if err := alice.Delete(ctx, fromSnap); err != nil {
		t.Fatal(err)
	}

	// Generations: hibernating commits one (durable node), the sandbox's
	// page lists it, and "Create from here" starts a sandbox with its files.
	gsb, err := alice.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.WriteFile(ctx, gsb.ID, api.WriteFileRequest{Path: "/tmp/gen.txt", Data: strings.NewReader("generation one\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Hibernate(ctx, gsb.ID); err != nil {
		t.Fatal(err)
	}
	if gens, err := alice.ListGenerations(ctx, gsb.ID); err != nil || len(gens) == 0 {
		t.Fatalf("generations after hibernate: %v, %v", gens, err)
	}
	do(t, tab, "generations page", chromedp.Evaluate[chromedp.Void](`location.hash = "#/sandbox/`+gsb.ID+`"`))
	waitJS(t, tab, "generation listed", `!!document.querySelector('#generation-rows tr[data-generation] button[data-action="from-generation"]')`)
	do(t, tab, "create from a generation", chromedp.Click(css(`#generation-rows tr[data-generation] button[data-action="from-generation"]`)))
	waitJS(t, tab, "on the sandbox from the generation", `location.hash.startsWith("#/sandbox/") && !location.hash.endsWith("`+gsb.ID+`") && document.querySelector("#main").dataset.loaded === "true"`)
	fromGen := eval[string](t, tab, `document.querySelector("#sandbox-id").textContent`)
	if data, err := alice.ReadFile(ctx, fromGen, "/tmp/gen.txt", 0, 0); err != nil || string(data) != "generation one\n" {
		t.Errorf("sandbox %s from a generation of %s: /tmp/gen.txt is %q, %v", fromGen, gsb.ID, data, err)
	}
	do(t, tab, "back to the list", chromedp.Evaluate[chromedp.Void](`location.hash = "#/sandboxes"`))
	waitJS(t, tab, "list again", `document.querySelector("#sandboxes") && document.querySelector("#sandboxes").dataset.loaded === "true"`)
	for _, sid := range []string{fromGen, gsb.ID} {
		if err := alice.Delete(ctx, sid); err != nil {
			t.Fatal(err)
		}
	}

	// Node page: charts drawn from /metrics.
	do(t, tab, "node page", chromedp.Click(css(`#nav a[data-nav="node"]`)))
	waitJS(t, tab, "two samples", `Number(document.querySelector("#main").dataset.samples) >= 2`)
	if got := eval[string](t, tab, `document.querySelector("#stat-running").textContent`); got != "1" {
		t.Errorf("node page: %s running, want 1", got)
	}
	// Execs while the page samples: the rate and the latency show them.
	execDone := make(chan struct{})
	go func() {
		defer close(execDone)
		for i := 0; i < 40; i++ {
			if _, err := alice.Exec(ctx, id, api.ExecRequest{Script: "true"}, nil, nil); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	waitJS(t, tab, "exec rate shown", `Number(document.querySelector("#stat-rate").textContent) > 0 && /\d/.test(document.querySelector("#stat-p99").textContent)`)
	<-execDone
	if n := eval[int](t, tab, `document.querySelectorAll("#chart-rate path.line, #chart-memory path.line").length`); n < 2 {
		t.Errorf("node page draws %d chart lines, want the rate and memory lines", n)
	}
	b.shot(tab, "node")

	// At 1280x800 and in a narrow window: nothing wider than the window
	// (wide tables scroll inside their own box, text wraps).
	for _, size := range [][2]int64{{1280, 800}, {390, 800}} {
		for _, page := range []string{"#/node", "#/sandbox/" + id, "#/"} {
			what := fmt.Sprintf("%dx%d %s", size[0], size[1], page)
			do(t, tab, what, chromedp.EmulateViewport(size[0], size[1]), chromedp.Evaluate[chromedp.Void](`location.hash = "`+page+`"`))
			waitJS(t, tab, "page shown", `document.querySelector("#main").childElementCount > 0`)
			// Layout settles after the viewport change and the page's first
			// fetches: give it a moment before judging.
			fits := `document.documentElement.scrollWidth <= window.innerWidth`
			if _, err := chromedp.Run(tab, chromedp.Poll[bool](fits, chromedp.WithPollingTimeout(3*time.Second))); err != nil {
				w := eval[int](t, tab, `document.documentElement.scrollWidth - window.innerWidth`)
				widest := eval[string](t, tab, `[...document.querySelectorAll("*")].map(e => [Math.round(e.getBoundingClientRect().right), e.tagName + "#" + e.id + "." + e.className]).sort((a, b) => b[0] - a[0]).slice(0, 4).join("; ")`)
				t.Errorf("%s: the page is %d px wider than the window (widest: %s)", what, w, widest)
			}
		}
	}
	b.shot(tab, "sandboxes-narrow")
	do(t, tab, "wide again", chromedp.EmulateViewport(1280, 800))

	// Keyboard: Tab from the top reaches the filter, the create button, a
	// sort header, the sandbox's link and its actions, in that order.
	do(t, tab, "focus the top", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); window.scrollTo(0, 0)`))
	var order []string
	for i := 0; i < 40; i++ {
		do(t, tab, "tab", chromedp.KeyEvent("\t"))
		order = append(order, eval[string](t, tab, `(e => e.id || (e.dataset.sort && "sort-" + e.dataset.sort) || (e.dataset.action && "action-" + e.dataset.action) || (e.closest("#sandbox-rows") && e.tagName === "A" && "row-link") || e.tagName)(document.activeElement)`))
	}
	want := []string{"create", "filter", "sort-id", "row-link", "action-fork", "action-delete"}
	k := 0
	for _, f := range order {
		if k < len(want) && f == want[k] {
			k++
		}
	}
	if k < len(want) {
		t.Errorf("Tab order %v: want %v in order", order, want)
	}

	// A second tenant, in its own browser context, sees none of alice's
	// sandboxes, and cannot open one by its id.
	tabB := b.tab("bob")
	b.onFailure(tabB, "bob")
	do(t, tabB, "bob signs in", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(css("#key")),
		chromedp.SendKeys(css("#key"), keyB.Key+"\r"), chromedp.WaitVisible(css("#create")))
	waitJS(t, tabB, "bob's table", `document.querySelector("#sandboxes").dataset.loaded === "true"`)
	if n := eval[int](t, tabB, `document.querySelectorAll("#sandbox-rows tr[data-id]").length`); n != 0 {
		t.Errorf("bob sees %d sandboxes, want none", n)
	}
	do(t, tabB, "bob opens alice's sandbox", chromedp.Evaluate[chromedp.Void](`location.hash = "#/sandbox/`+id+`"`))
	waitJS(t, tabB, "not found banner", `!document.querySelector("#banner").hidden && document.querySelector("#banner").textContent.includes("does not exist")`)

	// Sign out: back to the form, and the tab forgets the key.
	do(t, tab, "sign out", chromedp.Click(css("#signout")), chromedp.WaitVisible(css("#key")))
	if got := eval[string](t, tab, `sessionStorage.getItem("warren.key") || ""`); got != "" {
		t.Errorf("the key is still stored after sign-out")
	}

	// The key travels in headers only: never in the server's log.
	if l := logs.String(); !strings.Contains(l, "/v1/sandboxes") || strings.Contains(l, keyA.Key) || strings.Contains(l, keyB.Key) {
		t.Errorf("server log has no requests, or has a key (%d bytes)", len(l))
	}
	// The capture works: the browser's own log of the wrong key's 401 was
	// seen (so an empty list below means no errors, not no listening).
	if all := b.errors(); !slices.ContainsFunc(all, regexp.MustCompile(`status of 401`).MatchString) {
		t.Errorf("the console capture missed the wrong key's 401; it saw: %q", all)
	}
	// No console errors, except the 401 of the wrong key and the 404 of
	// bob's look at alice's sandbox, which the browser logs itself.
	if errs := b.errors(
		regexp.MustCompile(`^alice: \[error network\] .*status of 401`),
		regexp.MustCompile(`^bob: \[error network\] .*status of 404`),
	); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
