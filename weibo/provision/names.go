package provision

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
)

// Bounds of a derived username.
const (
	derivedMaxLen = 24 // the stem's longest, leaving room for a suffix
	derivedMinLen = 3
	maxSuffix     = 99 // "_2" … "_99" before the hash suffix
)

// DeriveUsername returns candidate i (0, 1, ...) of the social username of
// a userName that is no username itself, "" past the last: 0 the stem
// (the part before '@', each run of characters outside [A-Za-z0-9_] → '_',
// trimmed of '_', cut to 24, padded to 3 with a 'u' prefix), 1..98 the
// stem with "_2" … "_99", 99 the stem with "_" and 6 hex digits of the
// SHA-256 of userName.
func DeriveUsername(userName string, i int) string {
	stem := usernameStem(userName)
	switch {
	case i == 0:
		return stem
	case i < maxSuffix:
		return stem + "_" + strconv.Itoa(i+1)
	case i == maxSuffix:
		sum := sha256.Sum256([]byte(userName))
		return stem + "_" + hex.EncodeToString(sum[:3])
	}
	return ""
}

// usernameStem is DeriveUsername's candidate 0.
func usernameStem(userName string) string {
	local, _, _ := strings.Cut(userName, "@")
	var b strings.Builder
	under := false
	for _, r := range local {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	stem := strings.Trim(b.String(), "_")
	if len(stem) > derivedMaxLen {
		stem = stem[:derivedMaxLen]
	}
	for len(stem) < derivedMinLen {
		stem = "u" + stem
	}
	return stem
}

// checkUserName refuses a userName that is no login name (BAD_USER_INPUT
// on "userName").
func checkUserName(name string) error {
	if !account.ValidLoginName(name) {
		return weibo.BadInput("userName", "userName must be 1 to %d printable characters", account.MaxLoginNameLength)
	}
	return nil
}

// checkExternalID refuses an externalId that cannot be indexed
// (BAD_USER_INPUT on "externalId").
func checkExternalID(ext string) error {
	if len(ext) > MaxExternalIDBytes || !utf8.ValidString(ext) || strings.IndexByte(ext, 0) >= 0 {
		return weibo.BadInput("externalId", "externalId must be valid UTF-8 of at most %d bytes without NUL", MaxExternalIDBytes)
	}
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
