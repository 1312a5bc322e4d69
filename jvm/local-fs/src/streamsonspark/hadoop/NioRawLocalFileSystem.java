package streamsonspark.hadoop;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system with permissions set and links looked up through java.nio.
 *
 * <p>Without Hadoop's native library (pip's pyspark ships none), {@link RawLocalFileSystem} runs a {@code chmod}
 * child process for every file and directory it creates and a {@code readlink} for every link lookup that
 * {@code FileContext.rename} makes: Spark's checkpoint and state store files cost two to four process spawns
 * each, 7-10 ms apiece from a Spark JVM on a 2-core machine. Everything else is Hadoop's own code.
 */
public class NioRawLocalFileSystem extends RawLocalFileSystem {
    // PosixFilePermission in the order of the permission bits, lowest first (others execute ... owner read)
    private static final PosixFilePermission[] BITS = {
        PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
        PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
        PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ,
    };

    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
        short mode = permission.toShort();
        if ((mode & ~0777) != 0) {   // the sticky bit: java.nio cannot set it, Hadoop's chmod can
            super.setPermission(p, permission);
            return;
        }
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        for (int i = 0; i < BITS.length; i++) {
            if ((mode & (1 << i)) != 0) {
                set.add(BITS[i]);
            }
        }
        try {
            Files.setPosixFilePermissions(pathToFile(p).toPath(), set);
        } catch (UnsupportedOperationException e) {   // a file system without POSIX permissions
            super.setPermission(p, permission);
        }
    }

    @Override
    public FileStatus getFileLinkStatus(Path f) throws IOException {
        if (!Files.isSymbolicLink(pathToFile(f).toPath())) {
            return getFileStatus(f);   // what Hadoop answers for a path that is not a link, without readlink
        }
        return super.getFileLinkStatus(f);
    }
}
