#include "genie/trace/node_header.h"

#include <string>

namespace genie::trace {
namespace {

// Reads a varint at *p; false when it runs past `end` or is longer than 10 bytes.
inline bool Varint(const uint8_t** p, const uint8_t* end, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70 && *p < end; shift += 7) {
    uint8_t c = *(*p)++;
    v |= static_cast<uint64_t>(c & 0x7f) << shift;
    if (c < 0x80) {
      *out = v;
      return true;
    }
  }
  return false;
}

Status Bad(const std::string& what, size_t at) {
  return Status::Corruption(what + " at byte " + std::to_string(at) + " of the node message");
}

// Appends a repeated uint64 field: packed (wire type 2) or one unpacked value (wire type 0).
Status Repeated(const uint8_t** p, const uint8_t* begin, const uint8_t* end, uint32_t wire,
                std::vector<uint64_t>* out) {
  uint64_t v = 0;
  if (wire == 0) {
    if (!Varint(p, end, &v)) return Bad("bad varint in a dependency list", *p - begin);
    out->push_back(v);
    return Status::Ok();
  }
  if (wire != 2) return Bad("dependency list with wire type " + std::to_string(wire), *p - begin);
  uint64_t len = 0;
  if (!Varint(p, end, &len) || len > static_cast<uint64_t>(end - *p)) {
    return Bad("dependency list runs past the end", *p - begin);
  }
  const uint8_t* stop = *p + len;
  while (*p < stop) {
    if (!Varint(p, stop, &v)) return Bad("bad varint in a packed dependency list", *p - begin);
    out->push_back(v);
  }
  return Status::Ok();
}

}  // namespace

Status ScanNodeHeader(std::string_view bytes, NodeHeader* header) {
  header->id = 0;
  header->type = 0;
  header->ctrl_deps.clear();
  header->data_deps.clear();
  const auto* begin = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* end = begin + bytes.size();
  const uint8_t* p = begin;
  while (p < end) {
    uint64_t key = 0;
    if (!Varint(&p, end, &key)) return Bad("bad field key", p - begin);
    uint64_t field = key >> 3;
    auto wire = static_cast<uint32_t>(key & 7);
    if (field == 0) return Bad("field number 0", p - begin);
    if (field == 4 || field == 5) {
      GENIE_RETURN_IF_ERROR(
          Repeated(&p, begin, end, wire, field == 4 ? &header->ctrl_deps : &header->data_deps));
      continue;
    }
    uint64_t v = 0;
    switch (wire) {
      case 0:
        if (!Varint(&p, end, &v)) return Bad("bad varint", p - begin);
        if (field == 1) header->id = v;
        if (field == 3) header->type = v;
        break;
      case 1:
        if (end - p < 8) return Bad("fixed64 runs past the end", p - begin);
        p += 8;
        break;
      case 5:
        if (end - p < 4) return Bad("fixed32 runs past the end", p - begin);
        p += 4;
        break;
      case 2:
        if (!Varint(&p, end, &v) || v > static_cast<uint64_t>(end - p)) {
          return Bad("length-delimited field runs past the end", p - begin);
        }
        p += v;
        break;
      default:
        return Bad("unsupported wire type " + std::to_string(wire), p - begin);
    }
  }
  return Status::Ok();
}

}  // namespace genie::trace
