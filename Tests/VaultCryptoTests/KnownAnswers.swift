/// Known answers computed with the reference Argon2 implementation (Debian's `argon2` CLI, which is
/// not libsodium): `echo -n password | argon2 somesaltsomesalt -id -t 2 -k 64 -p 1 -l 32 -r`.
enum KnownAnswers {
    static let argon2id_password_somesalt_t2_m64k = "1a98fba8e6394425c9bdc333a9c750aaf811df070f5fb4a5788e1cf4db5793a1"
}
