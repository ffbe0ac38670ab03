package e2e

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/internal/pgtest"
)

// One Chromium serves every test of the package, each test in a browser context of its
// own (an incognito profile: its own cookies, storage and cache, disposed with its tab).
// Starting and stopping a Chromium per test cost about a second each on CI's machine.
var chromium struct {
	sync.Mutex
	root       context.Context // the browser's first tab; done once the browser is gone
	height     int64           // of a new window whose page is as tall as the first tab's
	stop       func()
	startedFor string // the executable it was started from
}

// TestMain stops the shared Chromium after the tests, and the throw-away PostgreSQL
// cluster they started when they run on PostgreSQL (VOICEAPI_TEST_BACKEND=postgres).
func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	stopChromium()
	os.Exit(code)
}

// startChromium starts the shared Chromium from path, on first use or if it has gone
// (crashed, say). chromium is locked.
func startChromium(t *testing.T, path string) {
	if chromium.root != nil && chromium.root.Err() == nil && chromium.startedFor == path {
		return
	}
	if chromium.stop != nil {
		chromium.stop()
	}
	// Not t.TempDir: the profile outlives the test that started the browser.
	profile, err := os.MkdirTemp("", "voiceapi-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		// Phones draw scrollbars over the page; a desktop scrollbar would narrow a 375 px view.
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	root, cancelRoot := chromedp.NewContext(actx)
	// The first Run starts the browser and ties its life to root, which no test's time
	// limit bounds.
	if err := chromedp.Run(root); err != nil {
		cancelRoot()
		cancelAlloc()
		os.RemoveAll(profile)
		t.Fatalf("start chromium: %v", err)
	}
	chromium.root, chromium.startedFor, chromium.height = root, path, 900
	chromium.stop = func() {
		ctx, cancel := context.WithTimeout(root, 10*time.Second)
		chromedp.Cancel(ctx) // closes the browser and waits for it
		cancel()
		cancelRoot()
		cancelAlloc()
		os.RemoveAll(profile)
	}
	// A window opened through the protocol draws less of a browser's frame than the first
	// one: measured once, a test's window is made as much shorter, so that its page is
	// 1280 × the first tab's height, as when each test had a browser of its own.
	var first, probe int64
	if err := chromedp.Run(root, chromedp.Evaluate(`window.innerHeight`, &first)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	tab, closeTab := openTab(t)
	err = chromedp.Run(tab, chromedp.Evaluate(`window.innerHeight`, &probe))
	closeTab()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	chromium.height -= probe - first
}

// openTab opens a window in a new browser context (Chromium opens a context's first tab
// only in a window of its own) and returns its tab, and a function that closes both.
// chromium is locked, or set up.
func openTab(t *testing.T) (context.Context, func()) {
	root := chromium.root
	browser := cdp.WithExecutor(root, chromedp.FromContext(root).Browser)
	id, err := target.CreateBrowserContext().WithDisposeOnDetach(true).Do(browser)
	if err != nil {
		t.Fatalf("chromium: a browser context: %v", err)
	}
	tid, err := target.CreateTarget("about:blank").WithBrowserContextID(id).
		WithNewWindow(true).WithWidth(1280).WithHeight(chromium.height).Do(browser)
	if err != nil {
		t.Fatalf("chromium: a tab: %v", err)
	}
	tab, cancelTab := chromedp.NewContext(root, chromedp.WithTargetID(tid))
	return tab, func() {
		cancelTab() // closes the tab and waits
		ctx, cancel := context.WithTimeout(root, 10*time.Second)
		defer cancel()
		target.DisposeBrowserContext(id).Do(cdp.WithExecutor(ctx, chromedp.FromContext(root).Browser))
	}
}

// newTab opens a tab for t in a fresh browser context of the shared Chromium, started
// from path if need be.
func newTab(t *testing.T, path string) (context.Context, func()) {
	chromium.Lock()
	defer chromium.Unlock()
	startChromium(t, path)
	return openTab(t)
}

func stopChromium() {
	chromium.Lock()
	defer chromium.Unlock()
	if chromium.stop != nil {
		chromium.stop()
		chromium.root, chromium.stop = nil, nil
	}
}
