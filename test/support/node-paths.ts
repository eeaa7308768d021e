/**
 * Fixed host paths the real-node helpers rely on (Debian package locations).
 * @module
 */

/** Where the Debian `containernetworking-plugins` package installs the CNI plugins. */
export const CNI_BIN_DIR = '/usr/lib/cni';

/** The static busybox (Debian `busybox-static`) that test images are built from. */
export const BUSYBOX_PATH = '/bin/busybox';
