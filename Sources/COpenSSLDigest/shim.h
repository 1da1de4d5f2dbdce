#ifndef COPENSSLDIGEST_SHIM_H
#define COPENSSLDIGEST_SHIM_H
// OpenSSL 3 marks the SHA1_Init/Update/Final functions deprecated in favour of EVP. The EVP
// route fetches an implementation from a provider on each use (its one-shot SHA1() measured
// 640 ns for a 57-byte name here, against 120 ns for these, which keep the context on the
// caller's stack). They remain in OpenSSL 3's API; this keeps their deprecation out of Swift's warnings.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#endif
