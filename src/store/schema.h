/* schema.h - the store's migrations: schema_migrations[i] takes a store
 * from version i to version i+1. */
#ifndef LOCUS_SCHEMA_H
#define LOCUS_SCHEMA_H
extern const char *const schema_migrations[];
extern const int schema_nmigrations;
#endif
