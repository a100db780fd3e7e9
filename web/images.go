package web

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// imageTypes are the image types a page shows, by the type a block
// declares: never SVG, which can hold script.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// imageBlock is an image content block: pi's {data, mimeType}, or the
// Anthropic API's {source: {data, media_type}}.
type imageBlock struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	Source   *struct {
		Data      string `json:"data"`
		MediaType string `json:"media_type"`
	} `json:"source"`
}

// pageImage serves the nth image of a line's message, decoded, as the
// image type it declares when its bytes are that type.
func (s *Server) pageImage(w http.ResponseWriter, r *http.Request) error {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 0 {
		return invalidf("image must be a number")
	}
	e, err := s.lineEntry(r.Context(), r.PathValue("session"), r.PathValue("line"))
	if err != nil {
		return err
	}
	var m rawMessage
	if e.Entry == nil || json.Unmarshal(e.Entry, &m) != nil {
		return notFoundf("no image %d on this line", n)
	}
	content := m.Message.Content
	if len(content) == 0 {
		content = m.Content
	}
	var list []imageBlock
	json.Unmarshal(content, &list)
	i := 0
	for _, b := range list {
		if b.Type != "image" {
			continue
		}
		if i++; i-1 != n {
			continue
		}
		data, declared := b.Data, b.MimeType
		if b.Source != nil {
			data, declared = b.Source.Data, b.Source.MediaType
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return notFoundf("image %d on this line is not base64 data", n)
		}
		sniffed := http.DetectContentType(raw)
		if !imageTypes[declared] || sniffed != declared {
			return notFoundf("image %d on this line is not a PNG, JPEG, GIF or WebP image", n)
		}
		w.Header().Set("Content-Security-Policy", contentSecurityPolicy+"; sandbox")
		send(w, r, declared, raw)
		return nil
	}
	return notFoundf("no image %d on this line", n)
}
