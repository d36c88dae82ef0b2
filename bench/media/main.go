// Command media is the load client of `make bench`'s picture benchmarks
// (scripts/bench-media.sh, BENCH=media): it makes JPEGs, uploads them
// through the GraphQL multipart request spec (uploadMedia), measures the
// uploads, and lays out the thumbnails of a published post as files for
// nginx to serve the same bytes with the same headers.
//
//	media jpeg    -width 4000 -height 3000 -seed 1 -o FILE
//	media prepare -url URL -n 9 -out DIR -nginx-port PORT
//	media upload  -url URL -n 60 [-c 1] [-users 0] [-width 4000 -height 3000]
//
// jpeg writes one picture: smooth gradients under pixel noise, so its
// size is a phone photo's (a 12-megapixel one is 3-5 MB at quality 90),
// different for every seed.
//
// prepare registers a user, uploads n pictures (at most 9) of -width x
// -height, publishes one post with them, and reads each picture's THUMB
// variant from the gateway (GET of its url). It writes DIR/root/<path>
// (the bytes, at the URL path the gateway serves them from),
// DIR/media.json ({"thumbs": [{"path", "bytes", "etag", "type"}]}: what
// bench/k6/media-thumb.js requests and checks) and DIR/nginx.conf: nginx
// serving DIR/root on 127.0.0.1:PORT with the gateway's headers
// (Content-Type, ETag, Cache-Control, X-Content-Type-Options,
// Content-Security-Policy), each request logged to DIR/access.log in
// nginx's default format (as the gateway logs each request at its default
// level; -access-log=false: none), keep-alive connections kept as long as
// the client keeps them (as the gateway does).
//
// upload makes n distinct pictures first (not measured), registers
// enough users that none uploads more than 25 (the gateway allows 30 per
// user per 10 minutes), then uploads them, c at a time, each as the next
// user in turn; the time of an upload runs from sending the request to
// reading the whole answer (uploadMedia with id, width, height and
// blurhash), so it is the transfer, the processing and the store's
// writes. It prints one line on stdout, "count rate p50 p95 p99 max"
// (uploads, uploads a second, milliseconds), and a summary on stderr.
// Any error answer fails the run.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: media jpeg|prepare|upload [flags] (see the package comment)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "jpeg":
		err = jpegCmd(os.Args[2:])
	case "prepare":
		err = prepare(os.Args[2:])
	case "upload":
		err = upload(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q: jpeg, prepare or upload", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "media:", err)
		os.Exit(1)
	}
}

// password is the password of the users this client registers.
const password = "bench-media-password"

var httpClient = &http.Client{Timeout: 5 * time.Minute}

// makeJPEG encodes a width x height picture, different for every seed, at
// JPEG quality 90: a product of sine waves in luma and slow gradients in
// chroma (4:2:0), under per-pixel noise of +-12 in luma.
func makeJPEG(width, height int, seed uint64) ([]byte, error) {
	img := image.NewYCbCr(image.Rect(0, 0, width, height), image.YCbCrSubsampleRatio420)
	fx := 90 + float64(seed%97)
	fy := 70 + float64(seed*7%89)
	colw := make([]float64, width)
	for x := range colw {
		colw[x] = math.Sin(float64(x) / fx)
	}
	s := seed*0x9e3779b97f4a7c15 + 1
	for y := 0; y < height; y++ {
		ry := math.Cos(float64(y) / fy)
		row := img.Y[y*img.YStride : y*img.YStride+width]
		for x := range row {
			s ^= s << 13
			s ^= s >> 7
			s ^= s << 17
			v := 128 + 80*colw[x]*ry + float64(int(s&31)-16)*0.75
			row[x] = uint8(max(0, min(255, v)))
		}
	}
	cw, ch := (width+1)/2, (height+1)/2
	for y := 0; y < ch; y++ {
		for x := 0; x < cw; x++ {
			i := y*img.CStride + x
			img.Cb[i] = uint8(64 + 128*x/cw)
			img.Cr[i] = uint8(64 + 128*y/ch + int(seed%32))
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func jpegCmd(args []string) error {
	fs := flag.NewFlagSet("jpeg", flag.ContinueOnError)
	w := fs.Int("width", 4000, "width in pixels")
	h := fs.Int("height", 3000, "height in pixels")
	seed := fs.Uint64("seed", 1, "picture seed: another seed, another picture")
	out := fs.String("o", "", "output file (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("jpeg: -o is required")
	}
	b, err := makeJPEG(*w, *h, *seed)
	if err != nil {
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}

// gqlError is one error of a GraphQL answer.
type gqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// gqlAnswer decodes a GraphQL answer into out (its data); an HTTP status
// other than 200 or any error in the answer is an error.
func gqlAnswer(res *http.Response, out any) error {
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	var a struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.Unmarshal(body, &a); err != nil || res.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.300s", res.StatusCode, body)
	}
	if len(a.Errors) > 0 {
		return fmt.Errorf("GraphQL error %q (extensions %v)", a.Errors[0].Message, a.Errors[0].Extensions)
	}
	return json.Unmarshal(a.Data, out)
}

// gql POSTs query with vars as JSON (token: empty for none).
func gql(base, token, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	return gqlAnswer(res, out)
}

// register creates username and returns its token.
func register(base, username string) (string, error) {
	var out struct {
		Register struct{ Token string } `json:"register"`
	}
	err := gql(base, "", `mutation($u: String!, $p: String!) { register(username: $u, password: $p) { token } }`,
		map[string]any{"u": username, "p": password}, &out)
	if err != nil {
		return "", fmt.Errorf("register %s: %w", username, err)
	}
	return out.Register.Token, nil
}

// uploaded is the part of uploadMedia's answer the client reads.
type uploaded struct {
	ID       string `json:"id"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Blurhash string `json:"blurhash"`
}

const uploadQuery = `mutation($file: Upload!) { uploadMedia(file: $file) { id width height blurhash } }`

// multipartBody is an uploadMedia request of the GraphQL multipart
// request spec carrying data as its file, and its Content-Type.
func multipartBody(data []byte) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	ops, _ := json.Marshal(map[string]any{"query": uploadQuery, "variables": map[string]any{"file": nil}})
	_ = mw.WriteField("operations", string(ops))
	_ = mw.WriteField("map", `{"0": ["variables.file"]}`)
	fw, _ := mw.CreateFormFile("0", "picture.jpg")
	_, _ = fw.Write(data)
	_ = mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// uploadOne sends one prepared multipart body as token's upload.
func uploadOne(base, token string, body []byte, ctype string) (*uploaded, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Apollo-Require-Preflight", "true")
	res, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	var out struct {
		UploadMedia *uploaded `json:"uploadMedia"`
	}
	if err := gqlAnswer(res, &out); err != nil {
		return nil, fmt.Errorf("uploadMedia: %w", err)
	}
	if out.UploadMedia == nil || out.UploadMedia.ID == "" || out.UploadMedia.Width <= 0 || out.UploadMedia.Blurhash == "" {
		return nil, fmt.Errorf("uploadMedia: an answer without id, width or blurhash: %+v", out.UploadMedia)
	}
	return out.UploadMedia, nil
}

// runID is a suffix making this run's usernames new on a store that keeps
// earlier runs' users (HBase).
func runID() string { return strconv.FormatInt(time.Now().Unix()%1_000_000_000, 36) }

// thumb is one served thumbnail as media.json lists it.
type thumb struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
	ETag  string `json:"etag"`
	Type  string `json:"type"`
	// headers the gateway answered with and nginx must answer with too
	cacheControl, nosniff, csp string
}

func prepare(args []string) error {
	fs := flag.NewFlagSet("prepare", flag.ContinueOnError)
	base := fs.String("url", "http://127.0.0.1:8080", "the gateway")
	n := fs.Int("n", 9, "pictures of the post (1-9)")
	w := fs.Int("width", 1600, "width of the uploaded pictures")
	h := fs.Int("height", 1200, "height of the uploaded pictures")
	dir := fs.String("out", "", "output directory (required)")
	port := fs.Int("nginx-port", 18490, "the port nginx.conf listens on (127.0.0.1)")
	accessLog := fs.Bool("access-log", true, "nginx logs each request to DIR/access.log")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *n < 1 || *n > 9 {
		return errors.New("prepare: -out is required and -n is 1 to 9")
	}
	tok, err := register(*base, "mbp_"+runID())
	if err != nil {
		return err
	}
	ids := make([]string, *n)
	for i := range ids {
		data, err := makeJPEG(*w, *h, uint64(1000+i))
		if err != nil {
			return err
		}
		body, ct := multipartBody(data)
		m, err := uploadOne(*base, tok, body, ct)
		if err != nil {
			return err
		}
		ids[i] = m.ID
	}
	var pub struct {
		PublishPost struct {
			ID    string `json:"id"`
			Media []struct {
				ID  string `json:"id"`
				URL string `json:"url"`
			} `json:"media"`
		} `json:"publishPost"`
	}
	err = gql(*base, tok, `mutation($ids: [ID!]) { publishPost(content: "", mediaIds: $ids) { id media { id url(variant: THUMB) } } }`,
		map[string]any{"ids": ids}, &pub)
	if err != nil {
		return fmt.Errorf("publishPost: %w", err)
	}
	if len(pub.PublishPost.Media) != *n {
		return fmt.Errorf("publishPost: %d pictures in the post, want %d", len(pub.PublishPost.Media), *n)
	}
	root := filepath.Join(*dir, "root")
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	var thumbs []thumb
	for _, m := range pub.PublishPost.Media {
		t, err := fetchThumb(*base, m.URL, root)
		if err != nil {
			return err
		}
		thumbs = append(thumbs, t)
	}
	js, _ := json.MarshalIndent(map[string]any{"post": pub.PublishPost.ID, "thumbs": thumbs}, "", " ")
	if err := os.WriteFile(filepath.Join(*dir, "media.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*dir, "nginx.conf"), []byte(nginxConf(abs, *port, *accessLog, thumbs)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "media: post %s with %d pictures; thumbnails of %d bytes on average in %s\n",
		pub.PublishPost.ID, len(thumbs), avgBytes(thumbs), root)
	return nil
}

// fetchThumb GETs path from the gateway, checks its caching headers and
// writes its bytes under root at the decoded path.
func fetchThumb(base, path, root string) (thumb, error) {
	u, err := url.Parse(path)
	if err != nil || !strings.HasPrefix(u.Path, "/media/") || strings.Contains(u.Path, "..") {
		return thumb{}, fmt.Errorf("a thumbnail url not under /media/: %q", path)
	}
	res, err := httpClient.Get(base + path)
	if err != nil {
		return thumb{}, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return thumb{}, err
	}
	t := thumb{Path: path, Bytes: len(data), ETag: res.Header.Get("ETag"), Type: res.Header.Get("Content-Type"),
		cacheControl: res.Header.Get("Cache-Control"), nosniff: res.Header.Get("X-Content-Type-Options"),
		csp: res.Header.Get("Content-Security-Policy")}
	if res.StatusCode != http.StatusOK || len(data) == 0 || t.ETag == "" || t.Type == "" || t.cacheControl == "" {
		return thumb{}, fmt.Errorf("GET %s: HTTP %d, %d bytes, ETag %q, Content-Type %q, Cache-Control %q",
			path, res.StatusCode, len(data), t.ETag, t.Type, t.cacheControl)
	}
	file := filepath.Join(root, filepath.FromSlash(u.Path))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return thumb{}, err
	}
	return t, os.WriteFile(file, data, 0o644)
}

func avgBytes(ts []thumb) int {
	s := 0
	for _, t := range ts {
		s += t.Bytes
	}
	return s / max(1, len(ts))
}

// nginxConf is the configuration of an nginx run by an ordinary user
// (every path under dir) serving dir/root on 127.0.0.1:port: one exact
// location per thumbnail with the gateway's headers (nginx's own ETag
// off), every other path 404, each request logged to dir/access.log when
// accessLog. Worker processes: one per core, as the
// gateway's GOMAXPROCS. A worker runs as the user starting nginx (root
// included: the files are in the caller's tree).
func nginxConf(dir string, port int, accessLog bool, thumbs []thumb) string {
	q := func(s string) string { return `'` + strings.ReplaceAll(s, `'`, `\'`) + `'` }
	var b strings.Builder
	if os.Geteuid() == 0 {
		b.WriteString("user root;\n")
	}
	alog := "off"
	if accessLog {
		alog = dir + "/access.log"
	}
	fmt.Fprintf(&b, `worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
	access_log %[3]s;
	sendfile on;
	tcp_nopush on;
	tcp_nodelay on;
	keepalive_timeout 75s;
	keepalive_requests 100000000;
	open_file_cache max=1000 inactive=60s;
	server_tokens off;
	etag off;
	types {}
	client_body_temp_path %[1]s/tmp/body;
	proxy_temp_path %[1]s/tmp/proxy;
	fastcgi_temp_path %[1]s/tmp/fastcgi;
	uwsgi_temp_path %[1]s/tmp/uwsgi;
	scgi_temp_path %[1]s/tmp/scgi;
	server {
		listen 127.0.0.1:%[2]d;
		root %[1]s/root;
		location / { return 404; }
`, dir, port, alog)
	for _, t := range thumbs {
		u, _ := url.Parse(t.Path)
		fmt.Fprintf(&b, "\t\tlocation = %s {\n\t\t\tdefault_type %s;\n", q(u.Path), q(t.Type))
		for _, h := range [][2]string{{"ETag", t.ETag}, {"Cache-Control", t.cacheControl},
			{"X-Content-Type-Options", t.nosniff}, {"Content-Security-Policy", t.csp}} {
			if h[1] != "" {
				fmt.Fprintf(&b, "\t\t\tadd_header %s %s always;\n", h[0], q(h[1]))
			}
		}
		b.WriteString("\t\t}\n")
	}
	b.WriteString("\t}\n}\n")
	return b.String()
}

func upload(args []string) error {
	fs := flag.NewFlagSet("upload", flag.ContinueOnError)
	base := fs.String("url", "http://127.0.0.1:8080", "the gateway")
	n := fs.Int("n", 60, "uploads")
	c := fs.Int("c", 1, "uploads at a time")
	nusers := fs.Int("users", 0, "users uploading in turn (0: enough that none uploads more than 25)")
	w := fs.Int("width", 4000, "width of the pictures")
	h := fs.Int("height", 3000, "height of the pictures")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *c < 1 {
		return errors.New("upload: -n and -c must be positive")
	}
	if *nusers <= 0 {
		*nusers = (*n + 24) / 25
	}
	start := time.Now()
	bodies := make([][]byte, *n)
	ctypes := make([]string, *n) // each body has a boundary of its own
	var total int
	for i := range bodies {
		data, err := makeJPEG(*w, *h, uint64(i+1))
		if err != nil {
			return err
		}
		total += len(data)
		bodies[i], ctypes[i] = multipartBody(data)
	}
	fmt.Fprintf(os.Stderr, "media: %d pictures of %dx%d, %.2f MB on average, made in %.1f s\n",
		*n, *w, *h, float64(total)/float64(*n)/1e6, time.Since(start).Seconds())
	rid := runID()
	tokens := make([]string, *nusers)
	for i := range tokens {
		t, err := register(*base, fmt.Sprintf("mbu_%s_%d", rid, i))
		if err != nil {
			return err
		}
		tokens[i] = t
	}
	lat := make([]time.Duration, *n)
	errs := make(chan error, *n)
	next := make(chan int)
	var wg sync.WaitGroup
	start = time.Now()
	for range *c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				if _, err := uploadOne(*base, tokens[i%len(tokens)], bodies[i], ctypes[i]); err != nil {
					errs <- fmt.Errorf("upload %d: %w", i, err)
					continue
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	for i := range *n {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	slices.Sort(lat)
	ms := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(lat)))) - 1
		return float64(lat[max(0, i)]) / 1e6
	}
	rate := float64(*n) / elapsed.Seconds()
	fmt.Fprintf(os.Stderr, "media: %d uploads, %d at a time, %d users: %.2f/s; p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms\n",
		*n, *c, *nusers, rate, ms(0.50), ms(0.95), ms(0.99), ms(1))
	fmt.Printf("%d %.3f %.1f %.1f %.1f %.1f\n", *n, rate, ms(0.50), ms(0.95), ms(0.99), ms(1))
	return nil
}
