/* ipc/version.h: ejob's one version, for every binary (ejob-supervisor, ejob-worker, ejobctl,
 * shmdump): each answers --version with "ejob X.Y.Z" (DESIGN.md, "Packaging"). */
#ifndef EJOB_VERSION_H
#define EJOB_VERSION_H

#define EJOB_VERSION "0.1.0"

#endif
