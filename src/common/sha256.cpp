#include "common/sha256.h"

#include <openssl/evp.h>

#include <cstdint>
#include <stdexcept>

namespace cutegen {
namespace {

std::string hex_digest(const unsigned char* md, unsigned len) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 15];
  }
  return out;
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  // Failing here means OpenSSL itself is broken; there is no sensible recovery.
  if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL SHA-256 initialisation failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

Sha256& Sha256::add(std::string_view part) {
  auto* c = static_cast<EVP_MD_CTX*>(ctx_);
  std::uint64_t n = part.size();
  EVP_DigestUpdate(c, &n, sizeof n);
  EVP_DigestUpdate(c, part.data(), part.size());
  return *this;
}

std::string Sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &len);
  return hex_digest(md, len);
}

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  return hex_digest(md, len);
}

}  // namespace cutegen
