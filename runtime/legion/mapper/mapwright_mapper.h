/* mapwright's Legion mapper: a drop-in for the reference DSL mapper.
 *
 * Call register_mappers() from main() before Runtime::start (as with the
 * reference DSL mapper) and run with `-mapping FILE`. Every decision comes
 * from mapwright's Rust code (mapwright_abi.h). */
#ifndef MAPWRIGHT_MAPPER_H
#define MAPWRIGHT_MAPPER_H

#ifdef __cplusplus
extern "C" {
#endif

/* Registers mapwright's mapper in place of Legion's default mapper. */
void register_mappers(void);

#ifdef __cplusplus
}
#endif

#endif
