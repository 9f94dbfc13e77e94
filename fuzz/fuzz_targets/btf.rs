//! Fuzzes the BTF reader and the layout code over every type it decodes: errors, never a
//! panic, a hang or an allocation sized by a count from the input.
#![no_main]

use fevlint_btf::Btf;
use fevlint_types::layout;
use fevlint_types::model::{TypeNamespace, TypeRef, TypeSource};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(btf) = Btf::parse("fuzz", data.to_vec()) else { return };
    for id in 1..btf.next_id().min(2000) {
        let ty = TypeRef(u64::from(id));
        let _ = btf.get(ty);
        let _ = btf.size_of(ty);
        let _ = layout::type_name(&btf, ty);
        let _ = layout::print_struct(&btf, ty);
        let _ = layout::member_at(&btf, ty, 8);
        let _ = btf.embedders(ty);
    }
    let _ = btf.find_type(TypeNamespace::Struct, "file");
    let _ = btf.function_names();
    let _ = btf.functions("vfs_read");
});
