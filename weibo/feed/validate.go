package feed

import "github.com/weibohbase/gateway/weibo"

// MaxPostBytes caps a post's content in bytes (UTF-8), on top of the
// MaxPostLength characters: 64 KiB holds 10,000 characters of any script or
// single-code-point emoji (at most 4 bytes each), and 2,600 of the longest
// common emoji sequences (a family emoji is 25 bytes).
const MaxPostBytes = 64 << 10

// ValidateContent checks a post's content: valid UTF-8, at most
// MaxPostBytes bytes, 1 to MaxPostLength user-perceived characters
// (extended grapheme clusters, as github.com/rivo/uniseg counts them: a
// family emoji or a letter with its accents is one), and at least one
// visible character (weibo.ValidateText). Errors: BAD_USER_INPUT on
// "content".
func ValidateContent(content string) error {
	return weibo.ValidateText(weibo.TextRule{Field: "content", MaxChars: MaxPostLength, MaxBytes: MaxPostBytes}, content)
}
