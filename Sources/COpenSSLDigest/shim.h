#ifndef COPENSSLDIGEST_SHIM_H
#define COPENSSLDIGEST_SHIM_H
// OpenSSL 3 marks the SHA1_Init/Update/Final functions deprecated in favour of EVP. The EVP
// route fetches an implementation from a provider on each use (its one-shot SHA1() measured
// 640 ns for a 57-byte name here, against 120 ns for these, which keep the context on the
// caller's stack). They remain in OpenSSL 3's API; this keeps their deprecation out of Swift's warnings.
// OpenSSLCrypto uses EVP (SHA-256, AES-GCM), with each algorithm fetched once for the process.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

// EVP_CIPHER_CTX_ctrl's GCM commands, typed: the control call takes an untyped `void *` and a
// command number from a macro, which Swift would see as an integer and a raw pointer.

/// Sets the length of the IV (the GCM nonce) in bytes, before the key and IV are set. 1 on success.
static inline int COpenSSLDigest_gcmSetIVLength(EVP_CIPHER_CTX *context, int length) {
    return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, length, NULL);
}

/// Copies the tag a decryption must verify (read only: OpenSSL copies it into the context, though
/// the control call's parameter is not const). 1 on success.
static inline int COpenSSLDigest_gcmSetExpectedTag(EVP_CIPHER_CTX *context, const unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, length, (void *)tag);
}

/// Writes the tag of a finished encryption into `tag`. 1 on success.
static inline int COpenSSLDigest_gcmGetTag(EVP_CIPHER_CTX *context, unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, length, tag);
}
#endif
