// SPDX-License-Identifier: MIT
/* The one table between error codes and NTSTATUS ([MS-ERREF] 2.3.1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/ntstatus.h"

struct status_row {
	int err;		/* errno or E_SMB_* the server returns */
	uint32_t status;
	int client_errno;	/* errno a client reports for the status */
	const char *name;
	const char *text;
};

#define ROW(e, s, ce, t) { e, s, ce, #s, t }

/*
 * Order matters twice: the first row for an err gives its status, and
 * the first row for a status gives its client errno.
 */
static const struct status_row rows[] = {
	ROW(0, STATUS_SUCCESS, 0, "success"),
	ROW(E_SMB_MORE_PROCESSING, STATUS_MORE_PROCESSING_REQUIRED, EAGAIN, "more processing required"),
	ROW(E_SMB_NO_MORE_FILES, STATUS_NO_MORE_FILES, ENODATA, "no more files"),
	ROW(E_SMB_NO_SUCH_FILE, STATUS_NO_SUCH_FILE, ENOENT, "no such file"),
	ROW(ENOENT, STATUS_OBJECT_NAME_NOT_FOUND, ENOENT, "object name not found"),
	ROW(E_SMB_PATH_NOT_FOUND, STATUS_OBJECT_PATH_NOT_FOUND, ENOENT, "object path not found"),
	ROW(EEXIST, STATUS_OBJECT_NAME_COLLISION, EEXIST, "object name collision"),
	ROW(EACCES, STATUS_ACCESS_DENIED, EACCES, "access denied"),
	ROW(EPERM, STATUS_ACCESS_DENIED, EACCES, "access denied"),
	ROW(E_SMB_LOGON_FAILURE, STATUS_LOGON_FAILURE, EACCES, "logon failure (wrong user name or password)"),
	ROW(E_SMB_NETWORK_ACCESS_DENIED, STATUS_NETWORK_ACCESS_DENIED, EACCES, "network access denied"),
	ROW(EROFS, STATUS_MEDIA_WRITE_PROTECTED, EROFS, "media write protected (read-only share)"),
	ROW(EINVAL, STATUS_INVALID_PARAMETER, EINVAL, "invalid parameter"),
	ROW(EBADMSG, STATUS_INVALID_PARAMETER, EINVAL, "invalid parameter"),
	ROW(EPROTO, STATUS_INVALID_PARAMETER, EINVAL, "invalid parameter"),
	ROW(EOVERFLOW, STATUS_INVALID_PARAMETER, EINVAL, "invalid parameter"),
	ROW(ENOMEM, STATUS_INSUFFICIENT_RESOURCES, ENOMEM, "insufficient resources"),
	ROW(ENOMEM, STATUS_NO_MEMORY, ENOMEM, "no memory"),
	ROW(ENOSPC, STATUS_DISK_FULL, ENOSPC, "disk full"),
	ROW(EDQUOT, STATUS_DISK_FULL, ENOSPC, "disk full"),
	ROW(EISDIR, STATUS_FILE_IS_A_DIRECTORY, EISDIR, "file is a directory"),
	ROW(E_SMB_FILE_IS_A_DIRECTORY, STATUS_FILE_IS_A_DIRECTORY, EISDIR, "file is a directory"),
	ROW(ENOTDIR, STATUS_NOT_A_DIRECTORY, ENOTDIR, "not a directory"),
	ROW(ENOTEMPTY, STATUS_DIRECTORY_NOT_EMPTY, ENOTEMPTY, "directory not empty"),
	ROW(ENAMETOOLONG, STATUS_NAME_TOO_LONG, ENAMETOOLONG, "name too long"),
	ROW(E_SMB_OBJECT_NAME_INVALID, STATUS_OBJECT_NAME_INVALID, EINVAL, "object name invalid"),
	ROW(EXDEV, STATUS_OBJECT_PATH_INVALID, EXDEV, "object path invalid (escapes the share)"),
	ROW(ELOOP, STATUS_STOPPED_ON_SYMLINK, ELOOP, "stopped on symlink"),
	ROW(EOPNOTSUPP, STATUS_NOT_SUPPORTED, EOPNOTSUPP, "not supported"),
	ROW(ENOSYS, STATUS_NOT_IMPLEMENTED, ENOSYS, "not implemented"),
	ROW(E_SMB_NOT_IMPLEMENTED, STATUS_NOT_IMPLEMENTED, ENOSYS, "not implemented"),
	ROW(EBADF, STATUS_FILE_CLOSED, EBADF, "file closed"),
	ROW(E_SMB_FILE_CLOSED, STATUS_FILE_CLOSED, EBADF, "file closed"),
	ROW(E_SMB_INVALID_HANDLE, STATUS_INVALID_HANDLE, EBADF, "invalid handle"),
	ROW(EBUSY, STATUS_SHARING_VIOLATION, EBUSY, "sharing violation"),
	ROW(E_SMB_SHARING_VIOLATION, STATUS_SHARING_VIOLATION, EBUSY, "sharing violation"),
	ROW(E_SMB_DELETE_PENDING, STATUS_DELETE_PENDING, ENOENT, "delete pending"),
	ROW(E_SMB_CANNOT_DELETE, STATUS_CANNOT_DELETE, EACCES, "cannot delete"),
	ROW(E_SMB_BUFFER_OVERFLOW, STATUS_BUFFER_OVERFLOW, EOVERFLOW, "buffer overflow (more data available)"),
	ROW(ERANGE, STATUS_BUFFER_TOO_SMALL, ERANGE, "buffer too small"),
	ROW(E_SMB_BUFFER_TOO_SMALL, STATUS_BUFFER_TOO_SMALL, ERANGE, "buffer too small"),
	ROW(E_SMB_INVALID_OWNER, STATUS_INVALID_OWNER, EPERM, "invalid owner"),
	ROW(E_SMB_INVALID_SECURITY_DESCR, STATUS_INVALID_SECURITY_DESCR, EINVAL, "invalid security descriptor"),
	ROW(E_SMB_NO_EAS_ON_FILE, STATUS_NO_EAS_ON_FILE, ENODATA, "no extended attributes on the file"),
	ROW(E_SMB_INVALID_EA_NAME, STATUS_INVALID_EA_NAME, EINVAL, "invalid extended attribute name"),
	ROW(E_SMB_EAS_NOT_SUPPORTED, STATUS_EAS_NOT_SUPPORTED, EOPNOTSUPP, "extended attributes not supported"),
	ROW(E_SMB_INFO_LENGTH_MISMATCH, STATUS_INFO_LENGTH_MISMATCH, EINVAL, "info length mismatch"),
	ROW(E_SMB_INVALID_INFO_CLASS, STATUS_INVALID_INFO_CLASS, EOPNOTSUPP, "invalid info class"),
	ROW(E_SMB_INVALID_LEVEL, STATUS_INVALID_LEVEL, EOPNOTSUPP, "invalid level"),
	ROW(E_SMB_INVALID_DEVICE_REQUEST, STATUS_INVALID_DEVICE_REQUEST, EOPNOTSUPP, "invalid device request"),
	ROW(E_SMB_FS_DRIVER_REQUIRED, STATUS_FS_DRIVER_REQUIRED, EOPNOTSUPP, "file system driver required"),
	ROW(E_SMB_NOT_FOUND, STATUS_NOT_FOUND, ENOENT, "not found"),
	ROW(E_SMB_USER_SESSION_DELETED, STATUS_USER_SESSION_DELETED, ECONNRESET, "user session deleted"),
	ROW(E_SMB_NETWORK_NAME_DELETED, STATUS_NETWORK_NAME_DELETED, ENXIO, "network name deleted"),
	ROW(E_SMB_BAD_NETWORK_NAME, STATUS_BAD_NETWORK_NAME, ENOENT, "bad network name (no such share)"),
	ROW(E_SMB_REQUEST_NOT_ACCEPTED, STATUS_REQUEST_NOT_ACCEPTED, EAGAIN, "request not accepted"),
	ROW(E_SMB_REQUEST_OUT_OF_SEQUENCE, STATUS_REQUEST_OUT_OF_SEQUENCE, EPROTO, "request out of sequence"),
	ROW(E_SMB_FILE_NOT_AVAILABLE, STATUS_FILE_NOT_AVAILABLE, EBUSY, "file not available"),
	ROW(E_SMB_FILE_SYSTEM_LIMITATION, STATUS_FILE_SYSTEM_LIMITATION, EFBIG,
	    "file system limitation"),
	ROW(E_SMB_INVALID_OPLOCK_PROTOCOL, STATUS_INVALID_OPLOCK_PROTOCOL, EPROTO, "invalid oplock protocol (no break in progress)"),
	ROW(E_SMB_INVALID_LOCK_RANGE, STATUS_INVALID_LOCK_RANGE, EINVAL, "invalid lock range"),
	ROW(E_SMB_OBJECT_NAME_NOT_FOUND, STATUS_OBJECT_NAME_NOT_FOUND, ENOENT, "object name not found"),
	ROW(E_SMB_PIPE_DISCONNECTED, STATUS_PIPE_DISCONNECTED, EPIPE, "pipe disconnected"),
	ROW(E_SMB_PIPE_EMPTY, STATUS_PIPE_EMPTY, EAGAIN, "pipe empty"),
	ROW(E_SMB_NOT_A_REPARSE_POINT, STATUS_NOT_A_REPARSE_POINT, EINVAL, "not a reparse point"),
	ROW(E_SMB_END_OF_FILE, STATUS_END_OF_FILE, ENODATA, "end of file"),
	ROW(E_SMB_LOCK_NOT_GRANTED, STATUS_LOCK_NOT_GRANTED, EAGAIN, "lock not granted"),
	ROW(E_SMB_FILE_LOCK_CONFLICT, STATUS_FILE_LOCK_CONFLICT, EAGAIN, "file lock conflict"),
	ROW(E_SMB_RANGE_NOT_LOCKED, STATUS_RANGE_NOT_LOCKED, ENOLCK, "range not locked"),
	ROW(E_SMB_CANCELLED, STATUS_CANCELLED, ECANCELED, "cancelled"),
	ROW(ECANCELED, STATUS_CANCELLED, ECANCELED, "cancelled"),
	ROW(E_SMB_BAD_IMPERSONATION, STATUS_BAD_IMPERSONATION_LEVEL, EINVAL, "bad impersonation level"),
	ROW(E_SMB_INVALID_VIEW_SIZE, STATUS_INVALID_VIEW_SIZE, ENODATA, "invalid view size (range past the end of the file)"),
	ROW(EFBIG, STATUS_FILE_TOO_LARGE, EFBIG, "file too large"),
	ROW(EMLINK, STATUS_TOO_MANY_LINKS, EMLINK, "too many links"),
	ROW(EMFILE, STATUS_TOO_MANY_OPENED_FILES, EMFILE, "too many opened files"),
	ROW(ENFILE, STATUS_TOO_MANY_OPENED_FILES, EMFILE, "too many opened files"),
	ROW(ETXTBSY, STATUS_SHARING_VIOLATION, EBUSY, "sharing violation"),
	ROW(EAGAIN, STATUS_LOCK_NOT_GRANTED, EAGAIN, "lock not granted"),
	ROW(ETIMEDOUT, STATUS_IO_TIMEOUT, ETIMEDOUT, "I/O timeout"),
	ROW(ECONNRESET, STATUS_CONNECTION_RESET, ECONNRESET, "connection reset"),
	ROW(ENOTCONN, STATUS_CONNECTION_DISCONNECTED, ENOTCONN, "connection disconnected"),
	ROW(EIO, STATUS_IO_DEVICE_ERROR, EIO, "I/O device error"),
	ROW(EINTR, STATUS_CANCELLED, EINTR, "cancelled"),
	ROW(ESTALE, STATUS_FILE_DELETED, ESTALE, "file deleted"),
	ROW(ENXIO, STATUS_NO_SUCH_DEVICE, ENXIO, "no such device"),
	ROW(ENODEV, STATUS_NO_SUCH_DEVICE, ENODEV, "no such device"),
	ROW(EBADE, STATUS_DATA_ERROR, EIO, "data error"),
	ROW(E_SMB_NOTIFY_ENUM_DIR, STATUS_NOTIFY_ENUM_DIR, 0, "notify enum dir (too many changes: list the directory)"),
	ROW(E_SMB_NOTIFY_CLEANUP, STATUS_NOTIFY_CLEANUP, 0, "notify cleanup (the handle closed)"),
	/* statuses a server may send that we never produce */
	ROW(0, STATUS_PENDING, EINPROGRESS, "pending"),
	ROW(0, STATUS_UNSUCCESSFUL, EIO, "unsuccessful"),
	ROW(E_SMB_UNSUCCESSFUL, STATUS_UNSUCCESSFUL, EIO, "unsuccessful"),
	ROW(0, STATUS_OBJECT_TYPE_MISMATCH, EINVAL, "object type mismatch"),
	ROW(0, STATUS_OBJECT_PATH_SYNTAX_BAD, EINVAL, "object path syntax bad"),
	ROW(0, STATUS_ACCOUNT_RESTRICTION, EACCES, "account restriction"),
	ROW(0, STATUS_ACCOUNT_DISABLED, EACCES, "account disabled"),
	ROW(0, STATUS_PASSWORD_EXPIRED, EACCES, "password expired"),
	ROW(0, STATUS_NO_SUCH_USER, EACCES, "no such user"),
	ROW(0, STATUS_WRONG_PASSWORD, EACCES, "wrong password"),
	ROW(E_SMB_PRIVILEGE_NOT_HELD, STATUS_PRIVILEGE_NOT_HELD, EPERM, "privilege not held"),
	ROW(0, STATUS_NETWORK_SESSION_EXPIRED, ECONNRESET, "network session expired"),
	ROW(0, STATUS_INTERNAL_ERROR, EIO, "internal error"),
	ROW(0, STATUS_INVALID_NETWORK_RESPONSE, EPROTO, "invalid network response"),
	ROW(0, STATUS_FILES_OPEN, EBUSY, "files open"),
	ROW(0, STATUS_EA_TOO_LARGE, E2BIG, "EA too large"),
	ROW(0, STATUS_HMAC_NOT_SUPPORTED, EOPNOTSUPP, "HMAC not supported"),
	ROW(0, STATUS_INVALID_DEVICE_STATE, EIO, "invalid device state"),
	ROW(0, STATUS_TOO_MANY_SESSIONS, EAGAIN, "too many sessions"),
	ROW(0, STATUS_ACCESS_VIOLATION, EFAULT, "access violation"),
	ROW(0, STATUS_INVALID_USER_BUFFER, EFAULT, "invalid user buffer"),
	ROW(0, STATUS_TIMEOUT, ETIMEDOUT, "timeout"),
	ROW(0, STATUS_DUPLICATE_NAME, EEXIST, "duplicate name"),
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

uint32_t ntstatus_from_err(int err)
{
	size_t i;

	if (err < 0)
		err = -err;
	if (err == 0)
		return STATUS_SUCCESS;
	for (i = 1; i < NROWS; i++)
		if (rows[i].err == err)
			return rows[i].status;
	return STATUS_INTERNAL_ERROR;
}

static const struct status_row *find_status(uint32_t status)
{
	size_t i;

	for (i = 0; i < NROWS; i++)
		if (rows[i].status == status)
			return &rows[i];
	return NULL;
}

int ntstatus_to_errno(uint32_t status)
{
	const struct status_row *r = find_status(status);

	if (r)
		return r->client_errno;
	return nt_is_error(status) ? EIO : 0;
}

int ntstatus_to_err(uint32_t status)
{
	const struct status_row *r = find_status(status);

	if (r && r->err)
		return r->err;
	return ntstatus_to_errno(status);
}

const char *ntstatus_name(uint32_t status)
{
	const struct status_row *r = find_status(status);

	return r ? r->name : NULL;
}

const char *ntstatus_text(uint32_t status)
{
	static __thread char buf[32];
	const struct status_row *r = find_status(status);

	if (r)
		return r->text;
	snprintf(buf, sizeof(buf), "NTSTATUS 0x%08x", status);
	return buf;
}
