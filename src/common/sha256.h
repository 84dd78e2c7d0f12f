#pragma once
#include <string>
#include <string_view>

namespace cutegen {

// Incremental SHA-256 (OpenSSL) for content-addressed keys. Parts are length-prefixed so that
// ("ab","c") and ("a","bc") never hash alike.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256& add(std::string_view part);
  std::string hex();  // finishes the digest

 private:
  void* ctx_;
};

// Plain SHA-256 of one buffer (e.g. a file), hex-encoded.
std::string sha256_hex(std::string_view data);

}  // namespace cutegen
